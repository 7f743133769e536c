"""Encoder throughput against a bare onnxruntime loop: ``make perf-encoders`` / ``python -m benchmarks.encoders``.

For each encoder, on the same sample of the default corpus's passages (every n-th passage in id order):

1. turnbench's ``encode(texts, "passage")``: tokenizing, the runs, pooling and normalisation;
2. a bare loop over the same model file with the same session settings and the same token ids (tokenized beforehand,
   outside the timing), batched as the encoder batches (MiniLM: 8 sorted by length and padded; bge-small: one text
   per run), taking the output and nothing more;
3. for bge-small, the bare loop batched 8 at a time as MiniLM is: what one text per run costs (or saves), and how
   many vectors batching would change (the graph quantises activations per batch tensor).

Passages per second, best of ``--repeat`` timings each (the machine is shared: read them as ratios), with the
machine's load average. Figures only; nothing is written.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def sample_texts(corpus_dir: Path, sample: int) -> list[str]:
    from turnbench.corpus.format import open_corpus
    from turnbench.loading.chunking import chunk_meeting

    corpus = open_corpus(corpus_dir)
    chunks = sorted((c for m in corpus.iter_meetings() for c in chunk_meeting(m.id, m.turns)),
                    key=lambda c: c.passage.id)
    step = max(1, len(chunks) // sample)
    return [c.text for c in chunks[::step]][:sample]


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    seconds, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        seconds = min(seconds, time.perf_counter() - t0)
    return seconds, out


def bare_loop(session, ids: Sequence[Sequence[int]], batch: int):
    """session.run over the token ids, ``batch`` at a time sorted by length, padded to each batch's longest."""
    import numpy as np

    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    outputs = []
    for lo in range(0, len(order), batch):
        part = order[lo:lo + batch]
        width = max(len(ids[i]) for i in part)
        input_ids = np.zeros((len(part), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, i in enumerate(part):
            input_ids[row, :len(ids[i])] = ids[i]
            mask[row, :len(ids[i])] = 1
        outputs.append((part, session.run(["last_hidden_state"], {
            "input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)})[0]))
    return outputs


def cls_vectors(outputs, n: int, dim: int):
    import numpy as np

    out = np.empty((n, dim), dtype=np.float32)
    for part, hidden in outputs:
        for row, i in enumerate(part):
            v = hidden[row, 0].astype(np.float64)
            out[i] = v / np.linalg.norm(v)
    return out


def figures(name: str, texts: list[str], repeat: int) -> None:
    from turnbench.engines import encoders
    from turnbench.engines.encoders import bge, minilm

    encoder = encoders.get(name)
    if name == bge.ID:
        ids = encoder.token_ids(texts, "passage")
        batch = bge.BATCH
    else:
        ids = encoder.token_ids(texts)
        batch = minilm.BATCH
    session = encoder._session  # the same model file, settings and threads
    tokens = sum(len(i) for i in ids) / len(ids)
    ours, vectors = best_of(repeat, lambda: encoder.encode(texts, "passage"))
    bare, _ = best_of(repeat, lambda: bare_loop(session, ids, batch))
    n = len(texts)
    print(f"{name}: {n} passages, mean {tokens:.0f} tokens; turnbench encode {n / ours:.1f} passages/s, bare "
          f"onnxruntime loop ({batch} per run, pre-tokenized) {n / bare:.1f} passages/s: {bare / ours:.2f}x of bare")
    if name == bge.ID:
        import numpy as np

        batched, outputs = best_of(repeat, lambda: bare_loop(session, ids, 8))
        changed = cls_vectors(outputs, n, encoder.dim)
        same = int((changed == vectors).all(axis=1).sum())
        cos = (changed.astype(np.float64) * np.asarray(vectors, dtype=np.float64)).sum(axis=1)
        print(f"  bare loop batched 8 per run (padded): {n / batched:.1f} passages/s; {n - same} of {n} vectors differ "
              f"from the text run alone (cosine down to {cos.min():.4f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="corpora/default", type=Path)
    parser.add_argument("--sample", type=int, default=240)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--encoder", action="append", default=None,
                        help="an encoder id (repeatable); default every encoder")
    args = parser.parse_args()
    from turnbench.engines import encoders

    texts = sample_texts(args.corpus, args.sample)
    print(load_average())
    for name in args.encoder or encoders.names():
        figures(name, texts, args.repeat)
    print(load_average())


if __name__ == "__main__":
    main()
