/**
 * Begin and UserFillUp: where a run gets its inputs. Begin's `inputs` form is answered with the
 * ask's `inputs` (`{name: {value}}`); a UserFillUp pauses the run with its form and tips, and the
 * next ask's `inputs` answer it (RAGFlow `begin.py`, `fillup.py`).
 */
import type { ComponentImpl, Node } from '../node.js';
import type { Canvas } from '../canvas.js';
import { asText, materialize } from '../canvas.js';
import { isPlainObject } from '../../util/index.js';

/** The value of one form answer: `{value}` as RAGFlow sends it, or the bare value. */
function answerValue(v: unknown): unknown {
  if (isPlainObject(v)) return 'value' in v ? v.value ?? null : null;
  return v;
}

function applyInputs(n: Node, inputs: Record<string, unknown>, alsoInputs: boolean): void {
  for (const [k, v] of Object.entries(inputs)) {
    const value = answerValue(v);
    n.setOutput(k, value);
    if (alsoInputs) n.setInput(k, value);
  }
}

export const BEGIN: ComponentImpl = {
  async invoke(n, _c, kwargs) {
    const given = isPlainObject(kwargs.inputs) ? kwargs.inputs : {};
    // A form field not answered now keeps the value it was given when the session was created.
    const form = n.params.inputs ?? {};
    for (const [k, decl] of Object.entries(form)) {
      if (k in given || !isPlainObject(decl) || decl.value === undefined || decl.value === null) continue;
      n.setOutput(k, decl.value);
    }
    applyInputs(n, given, true);
  },
};

async function tips(n: Node, c: Canvas): Promise<string> {
  let content = String(n.param('tips') ?? 'Please fill up the form');
  for (const [k, el] of Object.entries(c.inputElementsFromText(n, content))) {
    const v = await materialize(el.value);
    const text = Array.isArray(v) ? v.map((x) => asText(x)).join(',') : asText(v);
    content = content.split(`{${k}}`).join(text);
  }
  return content;
}

export const USER_FILL_UP: ComponentImpl = {
  async invoke(n, c, kwargs) {
    if (n.param('enable_tips') !== false) n.setOutput('tips', await tips(n, c));
    applyInputs(n, isPlainObject(kwargs.inputs) ? kwargs.inputs : {}, false);
  },
};
