/**
 * Text analysis for the full-text index: the same function runs on chunks at index time and on
 * questions at query time, so both sides meet on the same terms.
 */

// A compact English stop list (SMART/Lucene core); questions words are stop words too, as
// RAGFlow drops them from queries.
const STOP = new Set(`a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for
from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how
how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such
than that that's the their theirs them themselves then there there's these they they'd they'll they're they've this those
through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
also may might must shall will us within without upon whether`.split(/\s+/));

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}'’]*/gu;

/** Light English suffix stripping (plural and common inflections); deterministic and cheap. */
export function stem(w: string): string {
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) return w.slice(0, -1);
  return w;
}

/** Lowercased, stop-word-free, stemmed terms; CJK runs become overlapping character bigrams. */
export function analyze(text: string): string[] {
  const out: string[] = [];
  const norm = text.normalize('NFKC').toLowerCase();
  for (const m of norm.matchAll(TOKEN)) {
    const tok = m[0].replace(/['’]s$/, '').replace(/['’]/g, '');
    if (!tok) continue;
    if (CJK.test(tok)) {
      pushCjk(tok, out);
      continue;
    }
    if (STOP.has(tok) || STOP.has(m[0])) continue;
    out.push(stem(tok));
  }
  return out;
}

function pushCjk(run: string, out: string[]): void {
  // Split mixed runs ("gpt模型") into CJK and non-CJK parts.
  let buf = '';
  let cjk = false;
  const flush = () => {
    if (!buf) return;
    if (cjk) {
      const chars = [...buf];
      if (chars.length === 1) out.push(chars[0]!);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
    } else if (!STOP.has(buf)) out.push(stem(buf));
    buf = '';
  };
  for (const ch of run) {
    const c = CJK.test(ch);
    if (c !== cjk) flush();
    cjk = c;
    buf += ch;
  }
  flush();
}

/** The analysed text as FTS5 stores it: terms joined by spaces. */
export const analyzeForIndex = (text: string): string => analyze(text).join(' ');
