"""Shared test set-up: hypothesis profiles and paths."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=5_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("LOGPARSE_HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite fixtures/**/*.events from the current parser (tests/test_goldens.py)")


SHARED = ROOT.parent / "shared"
REAL_LOGS = SHARED / "real-logs"
FIXTURES = ROOT / "fixtures"


@pytest.fixture(scope="session")
def grammar():  # type: ignore[no-untyped-def]
    from logparse.grammar import load_grammar

    return load_grammar()


# The heavy tests, marked `slow` so `make test-fast` (`-m "not slow"`) stays under 2 minutes; CI runs
# them all. Chosen by measurement (`pytest --durations`: 1.5 s or more on a loaded 2-core machine);
# new heavy tests mark themselves with `@pytest.mark.slow`.
SLOW_MODULES = (
    "tests/test_conformance.py",
    "tests/robustness/test_robust_escape.py",
    "tests/emulate/test_emulate_vllm_aggregated.py",
    "tests/emulate/test_emulate_determinism.py",
    "tests/emulate/test_emulate_dp.py",
    "tests/emulate/test_emulate_dp_idle_gap.py",
    "tests/emulate/test_emulate_vllm_dp.py",
    "tests/export/test_openmetrics.py",
)
SLOW_TESTS = (
    "tests/analysis/test_analysis_emulated.py::test_inputs_prefill_and_spec_match_the_truth",
    "tests/analysis/test_analysis_emulated.py::test_ranks_and_access_log_noise_change_nothing",
    "tests/analysis/test_analysis_emulated.py::test_shifting_timestamps_shifts_every_window",
    "tests/analysis/test_analysis_emulated.py::test_stable_window_and_phases_match_the_truth",
    "tests/analysis/test_analysis_gpustack.py::test_compare_reproduces_the_core_result_table",
    "tests/analysis/test_analysis_qa.py::test_compare_has_a_row_with_the_reason_for_each_log_without_phases",
    "tests/analysis/test_evidence_properties.py::test_figures_are_as_sure_as_they_say",
    "tests/analysis/test_evidence_properties.py::test_no_figure_outside_what_the_run_made_possible",
    "tests/analysis/test_fleet_summary.py::test_progress_only_for_many_runs_on_a_terminal",
    "tests/analysis/test_restarts.py::test_real_excerpts_are_one_start_each",
    "tests/analysis/test_restarts.py::test_summary_shows_the_starts_and_segment_k_picks_one",
    "tests/analysis/test_restarts.py::test_the_fleet_notes_a_restarted_run",
    "tests/analysis/test_unparsed_evidence.py::test_every_typed_real_excerpt_claims_no_missing_decode_stats",
    "tests/bench/test_bench_basis.py::test_bench_p90_basis_never_judges_at_a_mean",
    "tests/emulate/test_emulate_physical.py::test_an_emulated_run_is_physically_possible_or_refused",
    "tests/emulate/test_emulate_properties.py::test_random_runs_keep_truth_and_text_in_step",
    "tests/emulate/test_emulate_properties.py::test_random_runs_render_in_time_order",
    "tests/export/test_series.py::test_vllm_v1_gauges_are_the_printed_values",
    "tests/ingest/test_block_invariance.py::test_generated_sglang_logs",
    "tests/ingest/test_block_invariance.py::test_generated_vllm_logs",
    "tests/ingest/test_block_invariance.py::test_the_corpus_in_small_blocks_on_two_threads",
    "tests/ingest/test_dataset.py::test_a_second_ingest_replaces_the_dataset_and_foreign_folders_are_refused",
    "tests/ingest/test_jsonl.py::test_a_closed_stdout_ends_quietly",
    "tests/ingest/test_jsonl.py::test_jsonl_is_the_tables_whatever_the_blocks",
    "tests/ingest/test_jsonl.py::test_generated_logs",
    "tests/ingest/test_jsonl.py::test_odd_inputs_and_stdin",
    "tests/ingest/test_progress.py::test_nothing_on_a_pipe",
    "tests/ingest/test_streaming.py::test_a_large_table_in_the_hive_layout_is_several_files_that_read_back_as_one",
    "tests/report/test_report_build.py::test_cli_report_command",
    "tests/report/test_report_build.py::test_full_report_files",
    "tests/report/test_report_build.py::test_only_bench_files",
    "tests/report/test_report_build.py::test_only_logs_with_images",
    "tests/report/test_report_build.py::test_progress_only_when_asked",
    "tests/report/test_report_inputs.py::test_report_reads_a_dataset_as_its_runs",
    "tests/robustness/test_robust_hostile_input.py::test_a_gzip_that_expands_1000_times_into_one_line",
    "tests/robustness/test_robust_hostile_input.py::test_hostile_bytes_give_one_event_per_line_and_clean_output",
    "tests/robustness/test_robust_hostile_input.py::test_the_cli_streams_a_1_gib_line_from_stdin_in_bounded_memory",
    "tests/robustness/test_robust_unknown.py::test_suggested_rules_pass_the_check_and_type_the_lines",
    "tests/robustness/test_robust_user_grammar.py::test_a_broken_extension_is_refused_with_the_check_message",
    "tests/robustness/test_robust_user_grammar.py::test_a_line_no_rule_reads_is_drift_until_a_user_rule_types_it",
    "tests/robustness/test_robust_user_grammar.py::test_an_extension_types_the_new_key",
    "tests/test_patterns.py::test_broken_grammar_is_reported",
    "tests/test_patterns.py::test_cli_check_fails_on_broken_grammar_and_passes_on_builtin",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        name = item.nodeid.split("[", 1)[0]
        if path in SLOW_MODULES or name in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
