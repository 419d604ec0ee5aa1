// The parity corpus, built at test time: English prose from Debian's
// /usr/share/common-licenses, the project's own sources as code, and
// generated sections (a fixed-seed generator) for what prose lacks. Written
// as length-prefixed documents (u32 little endian, then the bytes) so that
// both sides read exactly the same bytes, invalid UTF-8 included.
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

let seed = 0x9e3779b9;
function rand() { // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];
const int = (n) => Math.floor(rand() * n);
const enc = new TextEncoder();

function walk(dir, exts, out) {
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules") continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, exts, out);
    else if (exts.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}

// Splits text into documents of about `size` bytes at line ends.
function chunks(buf, size) {
  const out = [];
  let start = 0;
  while (start < buf.length) {
    let end = Math.min(buf.length, start + size);
    while (end < buf.length && buf[end - 1] !== 0x0a) end++;
    out.push(buf.subarray(start, end));
    start = end;
  }
  return out;
}

function generated() {
  const docs = [];
  const text = (s) => docs.push(enc.encode(s));
  const words = ["the", "model", "Attention", "heads", "don't", "WE'LL", "it's", "THEY'RE",
    "I'm", "you've", "She'd", "can't", "HE'S", "o'clock", "rock'n'roll", "'s", "'LL", "'Re"];
  const cjk = ["中文分词", "日本語のテキスト", "한국어 문장", "注意力机制", "カタカナ", "漢字かな交じり文",
    "。", "，", "「引用」", "１２３", "ｆｕｌｌｗｉｄｔｈ"];
  const emoji = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇩🇪", "🧪", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𐍈", "🀄", "❤️", "🏳️‍🌈", "𓀀", "𠜎"];
  const combining = ["e\u0301", "a\u0308", "n\u0303", "\u0915\u094d\u0937", "o\u0302\u0323",
    "Å", "A\u030a", "\u1e9b\u0323", "ﬁ", "Ǆ", "\u0041\u0332\u0332", "Ω", "Ω", "ｶﾞ"];
  const specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>",
    "<tool_call>", "<|fim_prefix|>", "<|vision_pad|>", "<|im_start", "|im_end|>", "<think",
    "<<|im_start|>>", "<|endoftext|><|endoftext|>"];
  const spaces = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000",
    "\u2003", "\u0085", "\ufeff", "\u200b", "\u2028", "\v", "\f"];
  // numbers and digit runs
  for (let d = 0; d < 400; d++) {
    let s = "";
    for (let i = 0; i < 40; i++) {
      const k = int(6);
      if (k === 0) s += String(int(1e9));
      else if (k === 1) s += (rand() * 1e6).toFixed(int(5));
      else if (k === 2) s += "1".repeat(1 + int(30)) + pick(["", " ", ","]);
      else if (k === 3) s += "٣٤٥" + "१२३" + "Ⅻ" + "½";
      else if (k === 4) s += "-" + int(1e4) + "e" + int(30);
      else s += "0x" + int(0xffffff).toString(16);
      s += pick([" ", ", ", "\n", "", "; "]);
    }
    text(s);
  }
  // mixed prose-like lines with contractions, whitespace, CJK, emoji,
  // combining marks, special tokens
  for (let d = 0; d < 1500; d++) {
    let s = "";
    const n = 10 + int(60);
    for (let i = 0; i < n; i++) {
      const k = int(10);
      if (k < 4) s += pick(words);
      else if (k === 4) s += pick(cjk);
      else if (k === 5) s += pick(emoji);
      else if (k === 6) s += pick(combining);
      else if (k === 7) s += pick(specials);
      else if (k === 8) s += pick(spaces).repeat(1 + int(5));
      else s += pick([".", ",", "!?", "...", "—", "(", ")", "\"", "'", "`", "#", "->", "::"]);
      s += pick([" ", "", " ", "\n"]);
    }
    text(s);
  }
  // whitespace runs alone and at the edges
  for (let d = 0; d < 200; d++) {
    let s = "";
    for (let i = 0; i < 1 + int(8); i++) s += pick(spaces).repeat(1 + int(40)) + pick(["", "x", "Word", "1"]);
    text(s);
  }
  // empty input, a lone special token, edge cases
  text("");
  for (const s of specials) text(s);
  text("\ufeffBOM at the start");
  text("'S 'LL 'VE 'D 'M 'T 'RE 's 'll");
  // invalid UTF-8 (each maximal invalid subsequence becomes U+FFFD)
  const bad = [[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80],
    [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0x80, 0x80], [0xc3], [0xfe, 0xfe, 0x41]];
  for (let d = 0; d < 200; d++) {
    const parts = [];
    for (let i = 0; i < 1 + int(10); i++) {
      parts.push(...enc.encode(pick(words) + pick(["", " "])));
      if (rand() < 0.5) parts.push(...pick(bad));
      if (rand() < 0.2) parts.push(...enc.encode(pick(emoji)));
    }
    docs.push(Uint8Array.from(parts));
  }
  return docs;
}

export function buildCorpus(root) {
  const sections = [];
  const prose = [];
  for (const f of readdirSync("/usr/share/common-licenses").sort()) {
    const p = join("/usr/share/common-licenses", f);
    if (statSync(p).isFile()) prose.push(...chunks(readFileSync(p), 4096));
  }
  sections.push(["prose", prose]);
  const code = [];
  for (const d of ["lib", "cli", "include", "bench", "test", "docs"]) {
    for (const f of walk(join(root, d), [".c", ".h", ".cpp", ".md", ".py", ".sh", ".mjs"], []))
      code.push(...chunks(readFileSync(f), 4096));
  }
  sections.push(["code", code]);
  sections.push(["generated", generated()]);
  return sections;
}

export function writeCorpus(sections, path) {
  const parts = [];
  for (const [name, docs] of sections) {
    for (const d of docs) {
      const h = Buffer.alloc(4);
      h.writeUInt32LE(d.length);
      parts.push(h, Buffer.from(d));
    }
  }
  writeFileSync(path, Buffer.concat(parts));
}
