/**
 * Memory extraction: turning one stored exchange (`User Input: …\nAgent Response: …`) into typed
 * memory items with a chat model, as RAGFlow 0.25.6 does for memories whose `memory_type` holds
 * more than `raw`.
 *
 * - semantic: facts that hold regardless of time (definitions, stable preferences, relationships);
 * - episodic: events tied to a time (what happened, when);
 * - procedural: how to do something (steps, methods).
 *
 * The model gets a system prompt assembled from the memory's extractable types
 * ({@link extractionSystemPrompt}; it is also a memory's default `system_prompt`), a user prompt
 * carrying the conversation and the times ({@link extractionUserPrompt}), the memory's
 * temperature and a request for a JSON object. Its answer is read by {@link parseExtraction}:
 * `{"semantic": [{"content", "valid_at", "invalid_at"}], "episodic": […], "procedural": […]}`,
 * forgiving about code fences, reasoning blocks and prose around the object, strict about what an
 * item must hold. An answer that holds no JSON object stores nothing (`error` says why).
 *
 * Differences from RAGFlow 0.25.6, on purpose:
 * - sections are always in the order semantic, episodic, procedural (RAGFlow iterates a Python
 *   set, so its prompt's order can differ between processes);
 * - only the requested types are kept, at most `maxItemsPerType` each, duplicates dropped
 *   (RAGFlow stores whatever keys and how many items the model returned);
 * - a memory's custom `system_prompt` / `user_prompt` are honoured (0.25.6 never passes them to
 *   the model);
 * - times are written as ISO 8601 in local time with its offset, and zone-less times in the
 *   answer are read as local time (RAGFlow shows and stores naive server-local times).
 */
import type { ChatModel } from '../llm/types.js';
import { clip, isPlainObject, nowMs } from '../util/index.js';

// ---------------------------------------------------------------------------------------------
// Types and their bit flags

/** Every memory type, in RAGFlow's bit order. */
export const MEMORY_TYPES = ['raw', 'semantic', 'episodic', 'procedural'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** The types a model extracts (all but `raw`), in prompt and result order. */
export const EXTRACTED_TYPES = ['semantic', 'episodic', 'procedural'] as const;
export type ExtractedType = (typeof EXTRACTED_TYPES)[number];

/** RAGFlow's `memory_type` bit flags. */
export const MEMORY_TYPE_FLAGS: Readonly<Record<MemoryType, number>> = Object.freeze({
  raw: 1,
  semantic: 2,
  episodic: 4,
  procedural: 8,
});

export function isMemoryType(name: unknown): name is MemoryType {
  return typeof name === 'string' && (MEMORY_TYPES as readonly string[]).includes(name);
}

/**
 * The bit mask of type names. Names that are not memory types (exact, lower-case spelling) are
 * ignored, as RAGFlow's `calculate_memory_type` does; callers validate names before.
 */
export function typesToMask(names: Iterable<string>): number {
  let mask = 0;
  for (const n of names) if (isMemoryType(n)) mask |= MEMORY_TYPE_FLAGS[n];
  return mask;
}

/** The type names of a bit mask, in {@link MEMORY_TYPES} order; unknown bits are ignored. */
export function maskToTypes(mask: number): MemoryType[] {
  if (!Number.isInteger(mask)) return [];
  return MEMORY_TYPES.filter((t) => (mask & MEMORY_TYPE_FLAGS[t]) !== 0);
}

/** The extractable types among `types`, deduplicated, in {@link EXTRACTED_TYPES} order. */
export function extractedTypes(types: Iterable<string>): ExtractedType[] {
  const set = new Set<string>(types);
  return EXTRACTED_TYPES.filter((t) => set.has(t));
}

/**
 * Whether a chat model can extract memory. Extraction asks the model to write new text (items
 * phrased by the model, as JSON), so it needs a generative model: a model that declares
 * `capabilities.rewrite === false` (the built-in `ragloom-extractive@Builtin`, which only quotes
 * retrieved passages) cannot, and callers skip extraction with it, keeping the raw message alone.
 * A model without `capabilities` can do everything.
 */
export function canExtract(model: Pick<ChatModel, 'id' | 'capabilities'>): boolean {
  return model.capabilities?.rewrite !== false;
}

/** The raw message stored for an exchange, RAGFlow's `User Input: {in}\nAgent Response: {out}`. */
export function rawMessageContent(userInput: string, agentResponse: string): string {
  return `User Input: ${userInput}\nAgent Response: ${agentResponse}`;
}

// ---------------------------------------------------------------------------------------------
// Prompts

/** Most items kept per type, RAGFlow's default. */
export const DEFAULT_MAX_ITEMS_PER_TYPE = 5;

function itemCap(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 1 ? Math.floor(n) : DEFAULT_MAX_ITEMS_PER_TYPE;
}

const INTRO = `# Memory extraction

You read one exchange between a user and an AI agent and turn what is worth remembering into structured memory items of the kinds described below. Keep only what the conversation states or clearly implies; never add knowledge of your own. Write each item as a short, self-contained statement that makes sense without the conversation.`;

const TYPE_SECTIONS: Record<ExtractedType, string> = {
  semantic: `## Kind "semantic": facts that do not depend on time
Extract general knowledge: facts, definitions, concepts, stable preferences and relationships that stay true whenever they are read.
For instance: "The Danube flows into the Black Sea", "The user prefers answers in German".
Timestamps:
- valid_at: when the fact started to hold (a law coming into force, a discovery); the conversation time when the conversation does not say.
- invalid_at: when the fact stops holding (a repeal, a refutation); "" while it still holds, which is the usual case.`,
  episodic: `## Kind "episodic": events tied to a time
Extract what happened: experiences, events, incidents and personal stories, with who was involved and when.
For instance: "The user moved to Lyon in March 2023", "The nightly build failed on Tuesday".
Timestamps:
- valid_at: when the event started or took place.
- invalid_at: when the event ended; "" for an event without duration.
- Turn times the conversation gives ("at 9 am", "last Friday", "from May to July") into timestamps, reckoned from the conversation time.`,
  procedural: `## Kind "procedural": how to do something
Extract methods, processes and step-by-step instructions aimed at a goal, with the conditions they depend on.
For instance: "To rotate the API key: open Settings, choose Keys, click Regenerate", "Before a release: run the tests, then tag the commit".
Timestamps:
- valid_at: when the procedure took effect; the conversation time when the conversation does not say.
- invalid_at: when it expires or is superseded (a procedure for one version of a product ends with that version); "" while it is current.`,
};

const FORMAT_FIELDS: Record<ExtractedType, { content: string; valid_at: string; invalid_at: string }> = {
  semantic: { content: 'a factual statement', valid_at: 'timestamp the fact started to hold', invalid_at: 'timestamp it stops holding, or empty' },
  episodic: { content: 'what happened, as a short narrative', valid_at: 'timestamp the event started', invalid_at: 'timestamp the event ended, or empty' },
  procedural: { content: 'the steps to follow', valid_at: 'timestamp the procedure took effect', invalid_at: 'timestamp it expires, or empty' },
};

const EXAMPLES: Record<ExtractedType, { said: string; answer: object }> = {
  semantic: {
    said: 'User: "Is it true that octopuses have three hearts?" Agent: "Yes, two pump blood through the gills and one through the body." (conversation time 2025-03-10T09:30:00+01:00)',
    answer: { semantic: [{ content: 'Octopuses have three hearts: two pump blood through the gills, one through the rest of the body', valid_at: '2025-03-10T09:30:00+01:00', invalid_at: '' }] },
  },
  episodic: {
    said: 'User: "Our database went down yesterday between 2 and 4 pm." (conversation time 2025-03-10T09:30:00+01:00)',
    answer: { episodic: [{ content: "The user's database was down", valid_at: '2025-03-09T14:00:00+01:00', invalid_at: '2025-03-09T16:00:00+01:00' }] },
  },
  procedural: {
    said: 'Agent: "To clear the cache, stop the service, delete /var/cache/app, then start the service again." (conversation time 2025-03-10T09:30:00+01:00)',
    answer: { procedural: [{ content: 'Clearing the app cache: 1. stop the service 2. delete /var/cache/app 3. start the service', valid_at: '2025-03-10T09:30:00+01:00', invalid_at: '' }] },
  },
};

/**
 * The system prompt that asks a model to extract the given types (`raw` and unknown names are
 * left out; order and repetition do not matter). A pure function of the set of extractable types
 * and `maxItemsPerType`, so it serves as a memory's default `system_prompt` and tells whether a
 * stored prompt is still the default ({@link isDefaultSystemPrompt}). With no extractable type it
 * still returns the base instructions (a raw-only memory never extracts).
 */
export function extractionSystemPrompt(types: Iterable<string>, opts: { maxItemsPerType?: number } = {}): string {
  const kinds = extractedTypes(types);
  const max = itemCap(opts.maxItemsPerType);
  const names = kinds.map((k) => `"${k}"`).join(', ');
  const parts = [INTRO, ...kinds.map((k) => TYPE_SECTIONS[k])];
  parts.push(`## Rules for the answer
1. Answer with one valid JSON object and nothing else.
2. Use exactly the format below${kinds.length ? `: the keys ${names}, each holding a list of items` : ''}.
3. Every item has the fields "content", "valid_at" and "invalid_at".
4. Write timestamps in ISO 8601 (for instance 2025-03-10T09:30:00+01:00, or 2025-03-10 for a whole day); write "" for an unknown or open end.
5. Extract only the kinds described above; give an empty list (or leave the key out) for a kind with nothing worth remembering.
6. At most ${max} items per kind: keep the most useful ones.`);
  const format = kinds
    .map((k) => {
      const f = FORMAT_FIELDS[k];
      return `  "${k}": [\n    {"content": "${f.content}", "valid_at": "${f.valid_at}", "invalid_at": "${f.invalid_at}"}\n  ]`;
    })
    .join(',\n');
  parts.push(`## Answer format (JSON)\n\`\`\`json\n{\n${format}${format ? '\n' : ''}}\n\`\`\``);
  if (kinds.length) {
    const examples = kinds.map((k) => `Conversation: ${EXAMPLES[k].said}\nAnswer: ${JSON.stringify(EXAMPLES[k].answer)}`);
    parts.push(`## Examples\n${examples.join('\n\n')}`);
  }
  return `${parts.join('\n\n')}\n`;
}

/** Whether `prompt` is the default system prompt of `types` (a custom one survives a type change). */
export function isDefaultSystemPrompt(prompt: string, types: Iterable<string>, opts: { maxItemsPerType?: number } = {}): boolean {
  return prompt === extractionSystemPrompt(types, opts);
}

function toMs(t: Date | number, what: string): number {
  const ms = t instanceof Date ? t.getTime() : t;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new TypeError(`${what} must be a valid date or epoch milliseconds`);
  return ms;
}

/** `ms` as ISO 8601 in local time with its offset, e.g. `2025-03-10T09:30:00+01:00`. */
export function isoLocal(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const off = -d.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return (
    `${p(d.getFullYear(), 4)}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}` +
    `${sign}${p(Math.floor(a / 60))}:${p(a % 60)}`
  );
}

/**
 * The user prompt: the conversation, when it took place and the current time (ISO 8601, local
 * time with offset), under RAGFlow's headings.
 */
export function extractionUserPrompt(conversation: string, conversationTime: Date | number, now: Date | number): string {
  const t = isoLocal(toMs(conversationTime, 'conversationTime'));
  const n = isoLocal(toMs(now, 'now'));
  return `**CONVERSATION:**\n${conversation}\n\n**CONVERSATION TIME:** ${t}\n**CURRENT TIME:** ${n}`;
}

/**
 * Fills a custom user prompt template: `{conversation}`, `{conversation_time}` and
 * `{current_time}` (RAGFlow's names) are replaced in one pass, so text inside the conversation is
 * never substituted again; other braces stay. A template without `{conversation}` gets the
 * standard conversation block appended, so the model always sees the exchange.
 */
export function fillUserPrompt(template: string, conversation: string, conversationTime: Date | number, now: Date | number): string {
  const values: Record<string, string> = {
    conversation,
    conversation_time: isoLocal(toMs(conversationTime, 'conversationTime')),
    current_time: isoLocal(toMs(now, 'now')),
  };
  const filled = template.replace(/\{(conversation|conversation_time|current_time)\}/g, (_, k: string) => values[k]!);
  if (template.includes('{conversation}')) return filled;
  return `${filled}\n\n${extractionUserPrompt(conversation, conversationTime, now)}`;
}

// ---------------------------------------------------------------------------------------------
// Reading the answer

export interface ExtractedItem {
  type: ExtractedType;
  /** Trimmed, non-empty. */
  content: string;
  /** Epoch ms; the extraction's `now` when the model gave none or an unreadable one. */
  valid_at: number;
  /** Epoch ms, or null when open-ended (empty, missing or unreadable). */
  invalid_at: number | null;
}

export interface ParsedExtraction {
  items: ExtractedItem[];
  /** Why nothing could be read (the answer holds no JSON object); absent on success. */
  error?: string;
}

const ISO_EXTENDED =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const ISO_BASIC = /^(\d{4})(\d{2})(\d{2})(?:[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?)?(Z|z|[+-]\d{2}(?:\d{2})?)?$/;

function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}

/**
 * An ISO 8601 date or date-time as epoch ms, or undefined. Accepts `YYYY-MM-DD`, with `T` (or a
 * space) and `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff`, and the basic forms (`20250310T093000`);
 * a zone `Z`, `±HH:MM`, `±HHMM` or `±HH`. Without a zone the time is local (a bare date: local
 * midnight). Out-of-range fields (month 13, February 30, 25:00) are rejected.
 */
export function parseIsoTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  const m = ISO_EXTENDED.exec(s) ?? ISO_BASIC.exec(s);
  if (!m) return undefined;
  const [, ys, mos, ds, hs, mis, ss, frac, zone] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = hs === undefined ? 0 : Number(hs);
  const minute = mis === undefined ? 0 : Number(mis);
  const second = ss === undefined ? 0 : Number(ss);
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (minute > 59 || second > 59) return undefined;
  if (hour > 24 || (hour === 24 && (minute || second || ms))) return undefined;
  if (zone === undefined) {
    const d = new Date(2000, 0, 1);
    d.setFullYear(year, month - 1, day);
    d.setHours(hour, minute, second, ms);
    return d.getTime();
  }
  let offset = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offset = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  const t = d.getTime() - offset * 60_000;
  return Number.isFinite(t) ? t : undefined;
}

/** Index of the bracket closing the one at `start` (string-aware), or -1 when it never closes. */
function closingBracket(s: string, start: number): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

/** Drops a leading reasoning block (`<think>…</think>`, or its end alone when the opening was cut). */
function withoutThinking(text: string): { text: string; error?: string } {
  const lead = /^\s*<think(?:ing)?>/i.exec(text);
  if (lead) {
    const close = /<\/think(?:ing)?>/i.exec(text.slice(lead[0].length));
    if (!close) return { text: '', error: 'the answer ends inside its <think> block' };
    return { text: text.slice(lead[0].length + close.index + close[0].length) };
  }
  const close = /<\/think(?:ing)?>/i.exec(text);
  if (close && !/<think(?:ing)?>/i.test(text.slice(0, close.index))) {
    return { text: text.slice(close.index + close[0].length) };
  }
  return { text };
}

/**
 * The JSON object in a model's answer. The whole answer is tried first; else the first balanced
 * `{…}` outside strings that parses as an object (so code fences and prose around it do not
 * matter, and braces inside its strings are kept). Only JSON.parse reads it.
 */
function findObject(text: string): { value?: Record<string, unknown>; error?: string } {
  const s = text.trim();
  if (!s) return { error: 'the answer is empty' };
  try {
    const v = JSON.parse(s) as unknown;
    if (isPlainObject(v)) return { value: v };
    return { error: `the answer is ${kindOf(v)}, not a JSON object` };
  } catch {
    /* not bare JSON: look for the object inside */
  }
  let from = 0;
  let firstError: string | undefined;
  let sawArray = false;
  for (;;) {
    const brace = s.indexOf('{', from);
    const bracket = s.indexOf('[', from);
    if (brace < 0 && bracket < 0) break;
    if (bracket >= 0 && (brace < 0 || bracket < brace)) {
      // A top-level array: either prose ("[1]") or the wrong shape (`[{…}]`); never look inside.
      const end = closingBracket(s, bracket);
      if (end > 0) {
        try {
          if (Array.isArray(JSON.parse(s.slice(bracket, end + 1)))) {
            sawArray = true;
            from = end + 1;
            continue;
          }
        } catch {
          /* prose */
        }
      }
      from = bracket + 1;
      continue;
    }
    const end = closingBracket(s, brace);
    if (end < 0) return { error: firstError ?? `the JSON object is not closed (truncated answer?): ${JSON.stringify(clip(s.slice(brace), 120))}` };
    const slice = s.slice(brace, end + 1);
    try {
      const v = JSON.parse(slice) as unknown;
      if (isPlainObject(v)) return { value: v };
    } catch (err) {
      firstError ??= `the answer is not valid JSON (${(err as Error).message}): ${JSON.stringify(clip(slice, 120))}`;
    }
    from = end + 1;
  }
  if (firstError) return { error: firstError };
  if (sawArray) return { error: 'the answer is a JSON array, not a JSON object' };
  return { error: `the answer holds no JSON object: ${JSON.stringify(clip(s, 120))}` };
}

/**
 * Reads a model's extraction answer. Never throws: an answer without a readable JSON object gives
 * no items and `error`. From the object, only the requested extractable types are read (other
 * keys are ignored); a type's value is a list of items (a single item object is accepted too);
 * an item needs a non-empty string `content` (trimmed; items that are not objects, or whose
 * content is missing, blank or not a string, are dropped); identical contents within a type are
 * kept once; each type keeps its first `maxItemsPerType` items. `valid_at` falls back to `now`
 * and `invalid_at` to null when empty, missing or not ISO 8601 ({@link parseIsoTime}).
 */
export function parseExtraction(
  text: string,
  types: Iterable<string>,
  opts: { now: number; maxItemsPerType?: number },
): ParsedExtraction {
  if (typeof text !== 'string') return { items: [], error: `the answer is ${kindOf(text)}, not text` };
  const now = typeof opts?.now === 'number' && Number.isFinite(opts.now) ? opts.now : nowMs();
  const max = itemCap(opts?.maxItemsPerType);
  const thought = withoutThinking(text);
  if (thought.error) return { items: [], error: thought.error };
  const found = findObject(thought.text);
  if (!found.value) return { items: [], error: found.error ?? 'the answer holds no JSON object' };
  const obj = found.value;
  const items: ExtractedItem[] = [];
  for (const type of extractedTypes(types)) {
    if (!Object.hasOwn(obj, type)) continue;
    const raw = obj[type];
    const list = Array.isArray(raw) ? raw : isPlainObject(raw) ? [raw] : [];
    const seen = new Set<string>();
    for (const entry of list) {
      if (seen.size >= max) break;
      if (!isPlainObject(entry) || typeof entry.content !== 'string') continue;
      const content = entry.content.trim();
      if (!content || seen.has(content)) continue;
      seen.add(content);
      items.push({
        type,
        content,
        valid_at: parseIsoTime(entry.valid_at) ?? now,
        invalid_at: parseIsoTime(entry.invalid_at) ?? null,
      });
    }
  }
  return { items };
}

// ---------------------------------------------------------------------------------------------
// One extraction

export interface ExtractArgs {
  /** The memory's types (names); `raw` and unknown names are ignored. */
  types: Iterable<string>;
  userInput: string;
  agentResponse: string;
  /** When the exchange took place, epoch ms. */
  conversationTime: number;
  /** The current time, epoch ms (default: now); also the default `valid_at`. */
  now?: number;
  /** The memory's temperature. */
  temperature: number;
  /** The memory's `system_prompt`; blank or absent: {@link extractionSystemPrompt} of `types`. */
  systemPrompt?: string;
  /** The memory's `user_prompt` template ({@link fillUserPrompt}); blank or absent: {@link extractionUserPrompt}. */
  userPrompt?: string;
  /** @default 5 */
  maxItemsPerType?: number;
  signal?: AbortSignal;
}

export interface ExtractOutcome extends ParsedExtraction {
  /** The model's answer as it came (empty when the model was not asked). */
  raw: string;
}

/**
 * Asks `model` for the memory items of one exchange and reads its answer. The request is a
 * system and a user message with the memory's temperature and `json: true` (OpenAI's
 * `response_format: {type: 'json_object'}`); since OpenAI refuses JSON mode unless a message
 * mentions JSON, a custom prompt pair that never does gets a closing line asking for one.
 *
 * A failing model call rejects (e.g. a ChatModelError; the caller retries later); an answer that
 * cannot be read resolves with no items and `error`. Nothing is asked, and nothing returned, when
 * `types` holds no extractable type; a model that cannot extract ({@link canExtract}) is not asked
 * either and gives `error`.
 */
export async function extract(model: ChatModel, args: ExtractArgs): Promise<ExtractOutcome> {
  const types = extractedTypes(args.types);
  if (!types.length) return { items: [], raw: '' };
  if (!canExtract(model)) {
    return { items: [], raw: '', error: `chat model ${model.id} cannot extract memory: it does not write text of its own (use a generative chat model)` };
  }
  const now = args.now ?? nowMs();
  const conversation = rawMessageContent(args.userInput, args.agentResponse);
  const system = args.systemPrompt?.trim() ? args.systemPrompt : extractionSystemPrompt(types, { maxItemsPerType: args.maxItemsPerType });
  let user = args.userPrompt?.trim()
    ? fillUserPrompt(args.userPrompt, conversation, args.conversationTime, now)
    : extractionUserPrompt(conversation, args.conversationTime, now);
  if (!/json/i.test(system) && !/json/i.test(user)) user += '\n\nAnswer with one JSON object.';
  const result = await model.chat(
    [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    { temperature: args.temperature, json: true, signal: args.signal },
  );
  const raw = typeof result?.content === 'string' ? result.content : '';
  return { ...parseExtraction(raw, types, { now, maxItemsPerType: args.maxItemsPerType }), raw };
}
