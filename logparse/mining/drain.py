"""A small Drain-style template miner (He et al., ICWS 2017; the Drain3 layout, our own code).

Bodies are masked and split into tokens; a fixed-depth prefix tree, keyed by the token count and
then by the first tokens, leads to a short list of clusters, and a body joins the most similar
one (share of equal tokens at least `similarity`), turning the tokens that differ into `<*>`.
Every body lands in exactly one cluster, so the counts add up to the number of bodies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from logparse.mining.masking import MaskedBody, has_variable, mask_body

WILDCARD = "<*>"
MINE_LIMIT = 4096  # characters of a body that are clustered (the rest is one more token)


@dataclass
class Example:
    """The first line of a cluster, kept to show it and to suggest a rule from it."""

    line_no: int
    raw: str
    envelope: str
    body: str
    masked: MaskedBody


@dataclass
class Cluster:
    """One template: its tokens (`None` where members differ) and what it has seen."""

    template: list[str | None]
    example: Example
    count: int = 1
    envelopes: set[str] = field(default_factory=set)
    same_space: list[bool] = field(default_factory=list)  # per gap: equal in every member
    floats: set[tuple[int, int]] = field(default_factory=set)  # (token, piece) numbers seen with a '.'
    overflow: bool = False

    @property
    def first_line(self) -> int:
        """Line number of the first member."""
        return self.example.line_no

    def text(self) -> str:
        """The template as one line, `<*>` where members differ."""
        if self.overflow:
            return "<lines beyond the cluster limit>"
        return " ".join(WILDCARD if t is None else t for t in self.template) or "<blank line>"

    def literal_text(self) -> str:
        """The constant tokens only (to name a rule after)."""
        return " ".join(t for t in self.template if t is not None)

    def _absorb(self, masked: MaskedBody, keys: tuple[str, ...], envelope: str) -> None:
        self.count += 1
        self.envelopes.add(envelope)
        for i, key in enumerate(keys):
            if self.template[i] is not None and self.template[i] != key:
                self.template[i] = None
        for i, space in enumerate(masked.spaces):
            if self.same_space[i] and space != self.example.masked.spaces[i]:
                self.same_space[i] = False
        self.floats |= _float_slots(masked)


def _float_slots(masked: MaskedBody) -> set[tuple[int, int]]:
    out = set()
    for i, token in enumerate(masked.tokens):
        for j, piece in enumerate(token):
            if not isinstance(piece, str) and piece.mask == "NUM" and piece.field_type() == "float":
                out.add((i, j))
    return out


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    clusters: list[Cluster] = field(default_factory=list)


class TemplateMiner:
    """Clusters bodies into templates, one `add` per line; memory bounded by `max_clusters`."""

    def __init__(
        self, *, depth: int = 4, similarity: float = 0.4, max_children: int = 100, max_clusters: int = 20_000
    ) -> None:
        # As in Drain3: the tree has `depth` levels (root, token count, then depth - 3 tokens... at least 1).
        self.prefix_depth = max(1, depth - 3)
        self.similarity = similarity
        self.max_children = max_children
        self.max_clusters = max_clusters
        self._root: dict[int, _Node] = {}
        self._clusters: list[Cluster] = []
        self._overflow: Cluster | None = None
        self.lines = 0

    def add(self, line_no: int, raw: str, body: str, envelope: str = "") -> Cluster:
        """Add one unparsed line (its raw text and the body inside its envelope)."""
        self.lines += 1
        masked = mask_body(body if len(body) <= MINE_LIMIT else body[:MINE_LIMIT] + " …")
        keys = masked.keys()
        cluster = self._search(keys)
        if cluster is not None:
            cluster._absorb(masked, keys, envelope)
            return cluster
        example = Example(line_no, raw, envelope, body, masked)
        if len(self._clusters) >= self.max_clusters:
            if self._overflow is None:
                self._overflow = Cluster([], example, count=0, overflow=True)
                self._clusters.append(self._overflow)
            self._overflow.count += 1
            return self._overflow
        cluster = Cluster(
            list(keys),
            example,
            envelopes={envelope},
            same_space=[True] * len(masked.spaces),
            floats=_float_slots(masked),
        )
        self._insert(keys, cluster)
        self._clusters.append(cluster)
        return cluster

    def clusters(self) -> list[Cluster]:
        """All clusters, most frequent first (then by first line)."""
        return sorted(self._clusters, key=lambda c: (-c.count, c.first_line))

    def __iter__(self) -> Iterator[Cluster]:
        return iter(self.clusters())

    # -- the prefix tree -------------------------------------------------------------------------
    def _path(self, keys: tuple[str, ...]) -> list[str]:
        return [WILDCARD if has_variable(k) else k for k in keys[: self.prefix_depth]]

    def _search(self, keys: tuple[str, ...]) -> Cluster | None:
        node = self._root.get(len(keys))
        if node is None:
            return None
        for key in self._path(keys):
            nxt = node.children.get(key) or node.children.get(WILDCARD)
            if nxt is None:
                return None
            node = nxt
        best: Cluster | None = None
        best_score = (-1.0, -1)
        for cluster in node.clusters:
            score = _similarity(cluster.template, keys)
            if score > best_score:
                best, best_score = cluster, score
        if best is not None and (best_score[0] >= self.similarity or not keys):
            return best
        return None

    def _insert(self, keys: tuple[str, ...], cluster: Cluster) -> None:
        node = self._root.setdefault(len(keys), _Node())
        for key in self._path(keys):
            if key not in node.children and key != WILDCARD and len(node.children) >= self.max_children:
                key = WILDCARD
            node = node.children.setdefault(key, _Node())
        node.clusters.append(cluster)


def _similarity(template: list[str | None], keys: tuple[str, ...]) -> tuple[float, int]:
    """Share of tokens equal to the template's, and the number of `<*>` (Drain's tie-break)."""
    if not keys:
        return 1.0, 0
    same = params = 0
    for t, k in zip(template, keys):
        if t is None:
            params += 1
        elif t == k:
            same += 1
    return same / len(keys), params
