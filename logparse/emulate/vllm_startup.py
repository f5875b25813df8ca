"""The start-up part of a vLLM log: loading, compile, KV sizing, graph capture, server ready."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logparse.emulate import vllm_lines as L
from logparse.emulate.eras import VllmEra
from logparse.emulate.events import Sink, autotuner_oom
from logparse.emulate.noise import Noise
from logparse.emulate.params import RunParams
from logparse.emulate.render import Record, tqdm_segment, uvicorn_info


class VllmStartup:
    """Lay out a vLLM cold start on the time axis, rank by rank, in the era's line shapes."""

    def __init__(
        self, params: RunParams, era: VllmEra, noise: Noise, sink: Sink, pid: Callable[[str], int]
    ) -> None:
        self.params = params
        self.era = era
        self.noise = noise
        self.sink = sink
        self.pid = pid
        self.ranks = list(range(params.tp))
        self.engine = 0  # the DP engine being laid out (its sources, jitter keys, offset)
        self.shift = 0.0

    def _src(self, source: str) -> str:
        """The source name of an engine-core or worker process of the current DP engine."""
        return source if self.engine == 0 or source == "api" else f"{source}@{self.engine}"

    def _add(self, t: float, body: str, source: str, **kwargs: Any) -> Record:
        return self.sink.add(t + self.shift, body, source=self._src(source), **kwargs)

    def _log(
        self,
        t: float,
        source: str,
        key: str,
        body: str,
        level: str = "INFO",
        tag: str = "startup",
        **meta: Any,
    ) -> Record:
        return self._add(t, body, source, level=level, site=L.site(self.era, key), tag=tag, meta=meta)

    def _once_ranks(self) -> list[int]:
        # info_once scope `local` (0.19+): once per node, i.e. by DP engine 0's rank 0 only
        if self.era.info_once_rank0:
            return [0] if self.engine == 0 else []
        return self.ranks

    def _jit(self, key: str, scale: float) -> float:
        return 1.0 + scale * self.noise.z(key if self.engine == 0 else f"{key}|dp{self.engine}")

    def run(self) -> tuple[float, Record, dict[str, Any]]:
        """Lay out the start-up; return the ready time, its record and the start-up truth."""
        p, s, era = self.params, self.params.startup, self.era
        if era.version_line == "api_server":
            self._log(0.0, "api", "version", L.version_line(era.version))
        else:
            self._log(0.0, "api", "logo", L.logo(era.version, s.model))
        if era.v1:
            self._log(0.01, "api", "args", L.non_default_args(self._args()))
            self._log(2.1, "api", "arch", "Resolved architecture: %s" % s.model_class)
            self._log(2.1, "api", "maxlen", "Using max model len %s" % s.max_model_len)
            self._log(
                2.2,
                "api",
                "chunked",
                "Chunked prefill is enabled with max_num_batched_tokens=%d." % p.max_num_batched_tokens,
            )
        if "slow_tokenizer" in p.warnings:
            self._log(1.4, "api", "slow_tok", L.SLOW_TOKENIZER, level="WARNING", tag="warning")
        ends, graph_s, model_load = [], 0.0, 0.0
        for d in range(p.dp):
            # DP engine cores start together; each loads, profiles and captures on its own GPUs
            self.engine = d
            self.shift = 0.0 if d == 0 else 0.05 * d + 0.4 * abs(self.noise.z(f"dp_start|{d}"))
            t_end, graph, load = self._engine_core()
            ends.append(t_end + self.shift)
            if d == 0:
                graph_s, model_load = graph, load
        self.engine, self.shift = 0, 0.0
        t_end = max(ends)
        ready = t_end + s.post_init_s
        if p.aggregate_engine_logging:
            self._engines_initialized(t_end + 0.2 * (ready - t_end))
        ready_record = self._serve(t_end, ready)
        startup = {
            "weights_gib": s.weights_gib,
            "weight_load_s": s.weight_load_s,
            "model_load_s": model_load,
            "kv_pool_tokens": s.kv_pool_tokens,
            "kv_gib": s.kv_gib,
            "max_concurrency": round(s.kv_pool_tokens / s.max_model_len, 2),
            "max_model_len": s.max_model_len,
            "cuda_graph_s": graph_s,
            "cuda_graph_sizes": s.cuda_graph_sizes,
            "cuda_graph_gib": s.cuda_graph_gib,
            "compile_s": s.compile_s,
            "init_s": s.init_s,
            "ready_s": round(ready, 3),
            "peak_activation_gib": s.peak_activation_gib,
            "non_torch_gib": s.non_torch_gib,
            "oom_retries": s.oom_retries,
        }
        return ready, ready_record, startup

    def _engine_core(self) -> tuple[float, float, float]:
        """One engine core's start-up (workers included) on its own time axis (before `shift`);
        returns its `init engine` time, the printed graph-capture seconds and the load time."""
        p, s, era = self.params, self.params.startup, self.era
        t_load = s.pre_load_s
        model_load = s.model_load_s if s.model_load_s is not None else s.weight_load_s + 0.9
        self._shard_bar(t_load, s.weight_load_s, s.shards)
        loaded = []
        for r in self.ranks:
            jitter = 0.0 if r == 0 else abs(self._jit(f"load|{r}", 0.004) - 1.0) * s.weight_load_s
            src = f"w{r}"
            if r in self._once_ranks() or not era.v1:
                self._log(t_load + 0.01 * r, src, "load_start", L.starting_to_load(s.model))
            if era.v1 and r in self._once_ranks():
                self._log(
                    t_load + s.weight_load_s + jitter,
                    src,
                    "weights_took",
                    L.loading_weights_took(s.weight_load_s + jitter),
                )
            done = t_load + model_load + jitter
            self._log(done, src, "model_took", L.model_loading_took(era, s.weights_gib, model_load + jitter))
            if "fp8_kv_scale" in p.warnings and (r in self._once_ranks() or not era.info_once_exists):
                self._log(done - 0.2, src, "fp8", L.fp8_warning(era), level="WARNING", tag="warning")
            loaded.append(done)
        t_init0 = max(loaded) + 0.05
        t = t_init0
        if s.compile_s is not None:
            t = self._compile(t_init0, s.compile_s)
        if s.oom_retries:
            autotuner_oom(
                self.sink,
                t + 0.5 + self.shift,
                t + 6.0 + self.shift,
                s.oom_retries,
                [self._src(f"w{r}") for r in self.ranks],
                p.style.glue_tqdm,
                None,
            )
        t_end = t_init0 + s.init_s
        t_capture = t_end - s.cuda_graph_s - 1.2
        t_kv = t + max(0.5, 0.35 * (t_capture - t))
        self._memory(t_kv)
        graph_s = self._capture(t_capture, s.cuda_graph_s)
        if era.free_memory_line:
            free = s.total_gpu_gib - 0.81
            fit = round(
                (
                    s.total_gpu_gib * s.gpu_memory_utilization
                    - s.weights_gib
                    - s.non_torch_gib
                    - s.peak_activation_gib
                    - s.cuda_graph_gib
                )
                * 2**30
            )
            fit = s.kv_fit_bytes if s.kv_fit_bytes is not None else fit
            used = s.weights_gib + s.non_torch_gib + s.peak_activation_gib + s.cuda_graph_gib
            full = round((free - used) * 2**30)
            for r in self.ranks:
                self._log(
                    t_capture + s.cuda_graph_s + 0.3 + 0.01 * r,
                    f"w{r}",
                    "free_mem",
                    L.free_memory(
                        free,
                        s.total_gpu_gib,
                        s.gpu_memory_utilization,
                        s.weights_gib,
                        s.peak_activation_gib,
                        s.non_torch_gib,
                        s.cuda_graph_gib,
                        fit,
                        full,
                        s.kv_gib,
                    ),
                )
        self._log(t_end, "core", "init", L.init_engine(era, s.init_s, s.compile_s))
        return t_end, graph_s, model_load

    def _engines_initialized(self, t: float) -> None:
        """§2.4 the aggregated logger's `log_engine_initialized`, once all engines are up. The
        front end's num_gpu_blocks is the sum of the engines' (each engine's READY message adds its
        own), which the doc does not state."""
        s = self.params.startup
        blocks = self.params.dp * (s.kv_pool_tokens // s.block_size)
        self._log(t, "api", "engines_blocks", L.engines_num_gpu_blocks(self.params.dp, blocks), tag="kv")

    def _args(self) -> dict[str, object]:
        p, s = self.params, self.params.startup
        args: dict[str, object] = {
            "model_tag": s.model,
            "host": "0.0.0.0",
            "port": 8000,
            "max_model_len": s.max_model_len,
        }
        if p.tp > 1:
            args["tensor_parallel_size"] = p.tp
        if p.dp > 1:
            args["data_parallel_size"] = p.dp
        if p.ep_size > 1:
            args["enable_expert_parallel"] = True
        if p.aggregate_engine_logging:
            args["aggregate_engine_logging"] = True
        args["gpu_memory_utilization"] = s.gpu_memory_utilization
        args["max_num_batched_tokens"] = p.max_num_batched_tokens
        args["max_num_seqs"] = p.max_num_seqs
        if p.enable_prefix_caching:
            args["enable_prefix_caching"] = True
        if p.spec_tokens:
            args["speculative_config"] = {"method": p.spec_method, "num_speculative_tokens": p.spec_tokens}
        return args

    def _shard_bar(self, t0: float, seconds: float, shards: int) -> None:
        desc = "Loading safetensors checkpoint shards"
        for n in range(shards + 1):
            elapsed = seconds * n / shards
            self._add(
                t0 + max(elapsed, 0.05),
                "\r" + tqdm_segment(desc, n, shards, elapsed, False),
                source="w0",
                style="raw",
                tag="progress",
            )
        self._add(
            t0 + seconds,
            "\r" + tqdm_segment(desc, shards, shards, seconds, False),
            source="w0",
            style="raw",
            tag="progress",
        )

    def _compile(self, t0: float, total: float) -> float:
        for r in self.ranks:
            scale = self._jit(f"compile|{r}", 0.02) if r else 1.0
            src = f"w{r}"
            cache = f"/root/.cache/vllm/torch_compile_cache/3f9c2a71de/rank_{r}_{self.engine}/backbone"
            dynamo, graph = 0.34 * total * scale, 0.58 * total * scale
            lines = L.compile_lines(
                self.era, cache, dynamo, graph, total * scale, self.params.max_num_batched_tokens
            )
            once = r in self._once_ranks()
            times = (t0 + 0.1, t0 + dynamo, t0 + dynamo + graph, t0 + total * scale)
            keys = ("cache_dir", "dynamo", "compile_graph", "compile_total")
            for t, key, body in zip(times, keys, lines, strict=True):
                if key != "dynamo" or once or not self.era.info_once_exists:
                    self._log(t, src, key, body, tag="compile")
        return t0 + total * 1.05

    def _memory(self, t: float) -> None:
        s, era = self.params.startup, self.era
        for r in self.ranks:
            if not era.v1:
                body = L.memory_profiling_v0(
                    3.1,
                    s.total_gpu_gib,
                    s.gpu_memory_utilization,
                    s.weights_gib,
                    s.non_torch_gib,
                    s.peak_activation_gib,
                    s.kv_gib,
                )
                self._log(t + 0.01 * r, f"w{r}", "profiling", body, tag="memory")
            elif r in self._once_ranks() or not era.info_once_exists:
                self._log(t + 0.01 * r, f"w{r}", "avail_kv", L.available_kv(era, s.kv_gib), tag="kv")
        conc = s.kv_pool_tokens / s.max_model_len
        lines = L.kv_capacity(era, s.kv_pool_tokens, s.max_model_len, conc, s.block_size)
        keys = ("blocks", "kv_conc") if not era.v1 else ("kv_size", "kv_conc")
        for key, body in zip(keys, lines, strict=False):
            self._log(t + 0.3, "core", key, body, tag="kv")

    def _capture(self, t0: float, seconds: float) -> float:
        s, era = self.params.startup, self.era
        desc = "Capturing CUDA graph shapes" if not era.v1 else "Capturing CUDA graphs (decode, FULL)"
        if not era.v1:
            for r in self.ranks:
                self._log(t0 - 0.05, f"w{r}", "capture", L.CAPTURE_V0, tag="cuda_graph")
        n = s.cuda_graph_sizes
        bar = "".join("\r" + tqdm_segment(desc, i, n, seconds * i / n, True) for i in range(n + 1))
        self._add(t0 + seconds, bar, source="w0", style="raw", tag="progress")
        printed = 0.0
        for r in self.ranks:
            took = seconds if r == 0 else seconds * self._jit(f"graph|{r}", 0.012)
            if r in self._once_ranks() or not era.info_once_exists:
                self._log(
                    t0 + took + 0.01,
                    f"w{r}",
                    "graph_done",
                    L.graph_finished(took, s.cuda_graph_gib),
                    tag="cuda_graph",
                )
                printed = printed or float("%.0f" % took)
        return printed

    def _serve(self, t_end: float, ready: float) -> Record:
        era, color = self.era, self.params.style.color
        tasks = L.supported_tasks(era)
        t = t_end + 0.4 * (ready - t_end)
        if tasks:
            self._log(t, "api", "tasks", tasks)
        start_line = L.server_start(era, "http://0.0.0.0:8000")
        if start_line:
            self._log(t + 0.01, "api", "serve", start_line)
        for i, body in enumerate(L.routes()):
            self._log(t + 0.02, "api", "routes" if i == 0 else "route", body)
        pid = self.pid("api")
        self.sink.add(
            ready - 0.02,
            uvicorn_info(f"Started server process [{pid}]", color),
            source="api",
            style="raw",
            tag="startup",
        )
        self.sink.add(
            ready - 0.01,
            uvicorn_info("Waiting for application startup.", color),
            source="api",
            style="raw",
            tag="startup",
        )
        record = self.sink.add(
            ready,
            uvicorn_info("Application startup complete.", color),
            source="api",
            style="raw",
            tag="ready",
        )
        if not era.v1:
            self.sink.add(
                ready + 0.001,
                uvicorn_info("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)", color),
                source="api",
                style="raw",
                tag="startup",
            )
        return record
