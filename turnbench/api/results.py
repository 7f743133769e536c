"""A scored run as the façade hands it out: ``Results`` (the results record, ``turnbench.results.record``, with
where it was written), ``Row`` and ``QueryValues`` (the record's own); and a results directory given as either."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnbench.api._args import PathLike, _path, _typed
from turnbench.errors import BadInput
from turnbench.harness.rows import ALL
from turnbench.harness.score import ResultsFiles
from turnbench.results.record import Provenance
from turnbench.results.record import Results as Record
from turnbench.results.tables import Block, QueryValues, Row


@dataclass(frozen=True)
class Results:
    """A scored run: its rows, per-query values and provenance, as metrics.json holds them; ``out_dir`` is where
    it was written, if it was."""

    scored: ResultsFiles
    out_dir: Path | None = None

    @property
    def record(self) -> Record:
        """The results record: every field of the scored run (``turnbench.results.record``)."""
        return self.scored.results

    @property
    def document(self) -> Mapping[str, Any]:
        """metrics.json, whole, as written."""
        return self.scored.document

    @property
    def provenance(self) -> Provenance:
        return self.record.provenance

    @property
    def measures(self) -> tuple[str, ...]:
        return self._retrieval.measures

    @property
    def rows(self) -> tuple[Row, ...]:
        return self._retrieval.rows

    @property
    def per_query(self) -> tuple[QueryValues, ...]:
        return self._retrieval.per_query

    @property
    def _retrieval(self) -> Block:
        if self.record.retrieval is None:
            raise BadInput("these results hold no retrieval block (answers only)")
        return self.record.retrieval

    def mean(self, measure: str, cls: str = ALL) -> float | None:
        """The row's mean of ``measure`` (e.g. ``nDCG@10``, ``meeting:R@10``) for class ``cls``."""
        _typed(measure, str, "measure", "a measure's name (str)")
        _typed(cls, str, "cls", "a class's name (str)")
        if measure not in self.measures:
            raise BadInput(f"unknown measure {measure!r}; measures: {', '.join(self.measures)}")
        for row in self.rows:
            if row.cls == cls:
                return row.means[measure]
        raise BadInput(f"no row for class {cls!r}; rows: {', '.join(r.cls for r in self.rows)}")

    def to_markdown(self) -> str:
        """metrics.md, as ``bench`` and ``score`` write it."""
        from turnbench.render.markdown import render_metrics_md

        if self.scored.markdown is not None:
            return self.scored.markdown  # as it was just written, from this record
        return render_metrics_md(self.record)

    def to_summary(self) -> str:
        """What ``bench`` prints by default: the headline measures per class, the answers' EM and where the full
        tables and the report are, in at most 100 columns (``--full`` prints ``to_markdown``)."""
        from turnbench.render.summary import results_summary

        return results_summary(self.record, None if self.out_dir is None else str(self.out_dir))

    def to_dataframe(self, what: str = "per_query") -> Any:
        """A pandas DataFrame: ``per_query`` (one row per judged query, a column per measure) or ``rows`` (the table
        metrics.md shows). Needs pandas."""
        from turnbench.api import frames

        _typed(what, str, "what", '"per_query" or "rows"')
        if what not in ("per_query", "rows"):
            raise BadInput(f'what must be "per_query" or "rows", not {what!r}')
        return frames.per_query_frame(self._retrieval) if what == "per_query" else frames.rows_frame(self._retrieval)

    def to_ranx(self, level: str = "passage") -> tuple[Any, Any]:
        """ranx's ``(Run, Qrels)`` at ``level`` (``passage`` or ``meeting``): the run as scored, in rank order, and
        the qrels it was judged by; ``ranx.evaluate`` on them gives this record's values. Needs ranx."""
        from turnbench.api import frames

        run, qrels = frames.trec_files(self.out_dir, self.scored.extra_files,
                                       _typed(level, str, "level", '"passage" or "meeting"'))
        return frames.ranx_pair(self.record, run, qrels)

    def to_trec(self, level: str = "passage") -> tuple[str, str]:
        """(run, qrels) as TREC text, exactly the files written beside metrics.json at ``level``."""
        from turnbench.api import frames

        run, qrels = frames.trec_files(self.out_dir, self.scored.extra_files,
                                       _typed(level, str, "level", '"passage" or "meeting"'))
        return run.decode("utf-8"), qrels.decode("utf-8")

    def _repr_html_(self) -> str:
        """Jupyter's view: the metrics table the report shows."""
        from turnbench.api import frames

        return frames.html_table(self.record)

    def write(self, out: PathLike) -> Results:
        """Write a results directory at ``out`` (which must not exist or be empty); returns it, located there."""
        from turnbench.results.directory import runinfo, write_results

        write_results(_path(out, "out"), self.scored, runinfo({}))
        return Results(self.scored, Path(out))

    @classmethod
    def read(cls, directory: PathLike) -> Results:
        """A results directory, refused unless its digest and its numbers hold."""
        from turnbench.results.directory import read_results

        return cls(ResultsFiles(read_results(_path(directory, "directory"))), Path(directory))


def _results_dir(side: Results | PathLike, name: str) -> Path:
    if isinstance(side, Results):
        if side.out_dir is None:
            raise BadInput(f"{name}: these results were never written, and this reads a results directory: write() "
                           "them first (compare takes them in memory)")
        return side.out_dir
    return _path(side, f"{name} (Results or a results directory)")
