import { describe, expect, it } from 'vitest';
import {
  aggregate,
  assign,
  checkAggregatorGroups,
  checkStringTransformParams,
  checkSwitchParams,
  evaluateCondition,
  findRefs,
  merge,
  normalizeRef,
  pyFloat,
  pyJson,
  pyTruthy,
  renderTemplate,
  renderValueTemplate,
  runAssignments,
  selectBranch,
  split,
  splitText,
  stringTransform,
  toText,
  type Resolve,
} from '../../src/agent/ops/index.js';

/** A canvas of plain values; unknown references throw as RAGFlow's get_variable_value does. */
function canvas(vars: Record<string, unknown>): Resolve & { vars: Record<string, unknown>; reads: string[] } {
  const reads: string[] = [];
  const r = ((ref: string) => {
    reads.push(ref);
    if (!(ref in vars)) throw new Error(`Can't find variable: '${ref}'`);
    return vars[ref];
  }) as Resolve & { vars: Record<string, unknown>; reads: string[] };
  r.vars = vars;
  r.reads = reads;
  return r;
}

describe('references and templates', () => {
  it('finds references of every form, once each, in order', () => {
    const text = 'Q: {sys.query} by {Agent:Foo@content} {env.lang} {{sys.query}} {begin@file.0.name} {x} {not a ref} {SYS.user_id}';
    expect(findRefs(text)).toEqual(['sys.query', 'Agent:Foo@content', 'env.lang', 'begin@file.0.name', 'SYS.user_id']);
    expect(findRefs('')).toEqual([]);
  });

  it('renderTemplate substitutes {ref} as string_format does: text as is, JSON for others, "" for missing', () => {
    const r = canvas({
      'sys.query': 'hi',
      'a@n': 3,
      'a@obj': { k: [1, 'é'], b: true, z: null },
      'a@none': null,
      'a@undef': undefined,
      'a@brace': '{sys.query}',
    });
    expect(renderTemplate('{sys.query}/{a@n}/{a@obj}/[{a@none}][{a@undef}]', r)).toBe('hi/3/{"k": [1, "é"], "b": true, "z": null}/[][]');
    // Only the reference's own braces go; the value is not expanded a second time.
    expect(renderTemplate('{{sys.query}} {a@brace}', r)).toBe('{hi} {sys.query}');
    // Each reference is read once.
    r.reads.length = 0;
    renderTemplate('{sys.query}{sys.query}{sys.query}', r);
    expect(r.reads).toEqual(['sys.query']);
    expect(() => renderTemplate('{nope@x}', r)).toThrow("Can't find variable");
  });

  it('renderValueTemplate replaces wrapping braces too, keeps the spaces around', () => {
    const r = canvas({ 'sys.query': 'hi', 'a@list': ['x', 2] });
    expect(renderValueTemplate('<{{ {sys.query} }}> {a@list}', r)).toBe('<hi> ["x", 2]');
    expect(renderValueTemplate('Q: {{sys.query}} {sys.query} x', r)).toBe('Q: hi hi x');
  });

  it('toText / pyJson / pyTruthy / normalizeRef follow Python', () => {
    expect(toText('s')).toBe('s');
    expect(toText(undefined)).toBe('');
    expect(toText(1.5)).toBe('1.5');
    expect(pyJson({ a: [NaN, Infinity, -Infinity], b: {}, c: [] })).toBe('{"a": [NaN, Infinity, -Infinity], "b": {}, "c": []}');
    expect(pyJson('é', true)).toBe('"\\u00e9"');
    expect([null, undefined, false, 0, '', [], {}].map(pyTruthy)).toEqual([false, false, false, false, false, false, false]);
    expect([NaN, '0', [0], { a: 0 }, true, -1].map(pyTruthy)).toEqual([true, true, true, true, true, true]);
    expect(normalizeRef('{{ sys.query }}')).toBe('sys.query');
    expect(normalizeRef('Agent:A@content')).toBe('Agent:A@content');
  });
});

describe('Switch', () => {
  it('string operators are case-insensitive', () => {
    expect(evaluateCondition('contains', 'Hello World', 'WORLD')).toBe(true);
    expect(evaluateCondition('contains', 'Hello', 'x')).toBe(false);
    expect(evaluateCondition('not contains', 'Hello', 'x')).toBe(true);
    expect(evaluateCondition('not contains', 'Hello', 'ELL')).toBe(false);
    expect(evaluateCondition('start with', 'Hello', 'hE')).toBe(true);
    expect(evaluateCondition('start with', 'Hello', 'lo')).toBe(false);
    expect(evaluateCondition('end with', 'Hello', 'LO')).toBe(true);
    expect(evaluateCondition('end with', 'Hello', 'he')).toBe(false);
    expect(evaluateCondition('contains', 'abc', '')).toBe(true);
  });

  it('contains on a list is membership; other non-strings compare as text', () => {
    expect(evaluateCondition('contains', ['Apple', 'pear'], 'apple')).toBe(true);
    expect(evaluateCondition('contains', ['Apple', 'pear'], 'app')).toBe(false);
    expect(evaluateCondition('not contains', ['a', 'b'], 'c')).toBe(true);
    expect(evaluateCondition('contains', [1, 2], '2')).toBe(true);
    expect(evaluateCondition('contains', 12345, '234')).toBe(true);
    expect(evaluateCondition('contains', null, 'x')).toBe(false);
    expect(evaluateCondition('start with', { a: 1 }, '{"a"')).toBe(true);
  });

  it('empty / not empty use Python truthiness', () => {
    for (const v of ['', null, undefined, 0, [], {}, false]) {
      expect(evaluateCondition('empty', v, '')).toBe(true);
      expect(evaluateCondition('not empty', v, '')).toBe(false);
    }
    for (const v of ['0', ' ', 1, [0], { a: 1 }, true]) {
      expect(evaluateCondition('empty', v, '')).toBe(false);
      expect(evaluateCondition('not empty', v, '')).toBe(true);
    }
    // A numeric variable is not converted for empty (RAGFlow's float('') would raise).
    expect(evaluateCondition('empty', 5, '')).toBe(false);
  });

  it('= and ≠ are exact on strings and numeric when the variable is a number', () => {
    expect(evaluateCondition('=', 'abc', 'abc')).toBe(true);
    expect(evaluateCondition('=', 'abc', 'ABC')).toBe(false);
    expect(evaluateCondition('≠', 'abc', 'ABC')).toBe(true);
    expect(evaluateCondition('=', '5', '5.0')).toBe(false);
    expect(evaluateCondition('=', 5, '5.0')).toBe(true);
    expect(evaluateCondition('=', 5, ' 5 ')).toBe(true);
    expect(evaluateCondition('≠', 5, '6')).toBe(true);
    expect(evaluateCondition('=', 1.5, '1_5e-1')).toBe(true);
    expect(evaluateCondition('=', 1.5, '1.50001')).toBe(false);
    expect(evaluateCondition('=', 0.15, '1_5e-2')).toBe(true);
    expect(evaluateCondition('=', true, '1')).toBe(true);
    expect(evaluateCondition('=', true, 'TRUE')).toBe(true);
    expect(evaluateCondition('=', false, 'true')).toBe(false);
    expect(evaluateCondition('=', ['a'], 'a')).toBe(false);
    expect(evaluateCondition('=', null, '')).toBe(false);
    expect(evaluateCondition('=', '', undefined)).toBe(true);
    expect(() => evaluateCondition('=', 5, 'abc')).toThrow("could not convert string to float: 'abc'");
    expect(() => evaluateCondition('>', 5, [1])).toThrow("float() argument must be a string or a real number, not 'list'");
  });

  it('> < ≥ ≤ compare as floats, else strings lexicographically, else raise', () => {
    expect(evaluateCondition('>', '10', '9')).toBe(true);
    expect(evaluateCondition('<', '10', '9')).toBe(false);
    expect(evaluateCondition('≥', 3, '3')).toBe(true);
    expect(evaluateCondition('≤', 3, '2.5')).toBe(false);
    expect(evaluateCondition('≤', ' 2.5 ', '2.5')).toBe(true);
    expect(evaluateCondition('>', 'inf', '1e308')).toBe(true);
    expect(evaluateCondition('>', 'nan', '1')).toBe(false);
    expect(evaluateCondition('<', 'nan', '1')).toBe(false);
    // Not both numbers: Python's string ordering.
    expect(evaluateCondition('>', 'banana', 'apple')).toBe(true);
    expect(evaluateCondition('<', 'Banana', 'apple')).toBe(true);
    expect(evaluateCondition('≥', 'abc', 'abc')).toBe(true);
    expect(evaluateCondition('>', '10', 'abc')).toBe(false);
    expect(() => evaluateCondition('>', ['a'], 'a')).toThrow("'>' not supported between instances of 'list' and 'str'");
    expect(() => evaluateCondition('≥', null, 'a')).toThrow("'>=' not supported between instances of 'NoneType' and 'str'");
  });

  it('rejects unknown operators with RAGFlow\'s message', () => {
    expect(() => evaluateCondition('!=', 'a', 'b')).toThrow('Not supported operator: !=');
    expect(() => evaluateCondition('equals', 'a', 'b')).toThrow('Not supported operator: equals');
  });

  it('pyFloat accepts what Python float() accepts', () => {
    expect(pyFloat(' 1_000.5 ')).toBe(1000.5);
    expect(pyFloat('.5')).toBe(0.5);
    expect(pyFloat('5.')).toBe(5);
    expect(pyFloat('-Infinity')).toBe(-Infinity);
    expect(pyFloat('NaN')).toBeNaN();
    expect(pyFloat('1__0')).toBeUndefined();
    expect(pyFloat('0x10')).toBeUndefined();
    expect(pyFloat('')).toBeUndefined();
    expect(pyFloat(null)).toBeUndefined();
    expect(pyFloat(true)).toBe(1);
  });

  it('selectBranch: first matching condition, and/or, else end_cpn_ids', () => {
    const r = canvas({ 'sys.query': 'refund please', 'begin@n': 7, 'begin@tags': ['vip'] });
    const conditions = [
      { logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator: 'contains', value: 'REFUND' }, { cpn_id: 'begin@n', operator: '>', value: '10' }], to: ['A'] },
      { logical_operator: 'or', items: [{ cpn_id: 'begin@n', operator: '<', value: '0' }, { cpn_id: '{begin@tags}', operator: 'contains', value: 'VIP' }], to: ['B', 'B2'] },
      { logical_operator: 'and', items: [{ cpn_id: 'sys.query', operator: 'not empty' }], to: ['C'] },
    ];
    const seen: string[] = [];
    expect(selectBranch(conditions, ['Else'], r, (ref) => seen.push(ref))).toEqual(['B', 'B2']);
    expect(seen).toEqual(['sys.query', 'begin@n', 'begin@n', '{begin@tags}']);

    r.vars['begin@n'] = 11;
    expect(selectBranch(conditions, ['Else'], r)).toEqual(['A']);
    r.vars['begin@n'] = 1;
    r.vars['begin@tags'] = [];
    expect(selectBranch(conditions, ['Else'], r)).toEqual(['C']);
    r.vars['sys.query'] = '';
    expect(selectBranch(conditions, ['Else'], r)).toEqual(['Else']);
    expect(selectBranch(conditions, 'Else', r)).toEqual(['Else']);
  });

  it('selectBranch: or stops at the first true item; items without cpn_id are skipped; no items match', () => {
    const r = canvas({ 'a@x': 'yes' });
    const orCond = { logical_operator: 'or', items: [{ cpn_id: 'a@x', operator: '=', value: 'yes' }, { cpn_id: 'nope@y', operator: '=', value: '' }], to: 'T' };
    expect(selectBranch([orCond], [], r)).toEqual(['T']); // the second item is never read (it would throw)
    expect(selectBranch([{ items: [{ cpn_id: '', operator: '=', value: '' }], to: ['E'] }], ['Else'], r)).toEqual(['E']);
    expect(selectBranch([{ logical_operator: 'or', items: [], to: ['E'] }], ['Else'], r)).toEqual(['E']);
    expect(() => selectBranch([{ items: [{ cpn_id: 'nope@y', operator: '=', value: '' }], to: ['E'] }], ['Else'], r)).toThrow("Can't find variable");
    expect(() => selectBranch([{ items: [{ cpn_id: 'a@x', operator: 'like', value: '' }], to: ['E'] }], ['Else'], r)).toThrow('Not supported operator: like');
    expect(selectBranch([], ['Else'], r)).toEqual(['Else']);
  });

  it('checkSwitchParams has RAGFlow\'s messages', () => {
    expect(() => checkSwitchParams({ conditions: [], end_cpn_ids: ['x'] })).toThrow('[Switch] conditions does not support empty value.');
    expect(() => checkSwitchParams({ conditions: [{ items: [], to: [] }], end_cpn_ids: ['x'] })).toThrow("[Switch] 'To' can not be empty!");
    expect(() => checkSwitchParams({ conditions: [{ items: [], to: ['a'] }], end_cpn_ids: [] })).toThrow('[Switch] the ELSE/Other destination can not be empty.');
    expect(() => checkSwitchParams({ conditions: [{ items: [], to: ['a'] }], end_cpn_ids: ['b'] })).not.toThrow();
  });
});

describe('StringTransform', () => {
  it('split on any delimiter, first listed wins at a position, delimiters escaped', () => {
    expect(splitText('a,b;c', [',', ';'])).toEqual(['a', 'b', 'c']);
    expect(splitText('a,,b', [',', ',,'])).toEqual(['a', '', 'b']);
    expect(splitText('a,,b', [',,', ','])).toEqual(['a', 'b']);
    expect(splitText('1.2|3*4', ['.', '|', '*'])).toEqual(['1', '2', '3', '4']);
    expect(splitText('line1\nline2', ['\n'])).toEqual(['line1', 'line2']);
    expect(splitText('abc', [''])).toEqual(['abc']);
    expect(splitText(',a,', [','])).toEqual(['', 'a', '']);
  });

  it('split reads split_ref, or line when given; empty → [""]; non-string → RAGFlow error', () => {
    const r = canvas({ 'begin@csv': 'x, y,z', 'begin@list': ['a'], 'begin@empty': null, 'begin@n': 0 });
    expect(split({ split_ref: 'begin@csv', delimiters: [','] }, r)).toEqual(['x', ' y', 'z']);
    expect(split({ split_ref: '{begin@csv}' }, r)).toEqual(['x', ' y', 'z']);
    expect(split({ split_ref: 'begin@csv' }, r, 'p-q')).toEqual(['p-q']);
    expect(split({ split_ref: 'begin@csv', delimiters: ['-'] }, r, 'p-q')).toEqual(['p', 'q']);
    expect(split({ split_ref: 'begin@empty' }, r)).toEqual(['']);
    expect(split({ split_ref: 'begin@n' }, r)).toEqual(['']);
    expect(split({}, r)).toEqual(['']);
    expect(() => split({ split_ref: 'begin@list' }, r)).toThrow("The input variable is not a string: <class 'list'>");
    r.vars['begin@d'] = { a: 1 };
    expect(() => split({ split_ref: 'begin@d' }, r)).toThrow("The input variable is not a string: <class 'dict'>");
    r.vars['begin@f'] = 1.5;
    expect(() => split({ split_ref: 'begin@f' }, r)).toThrow("The input variable is not a string: <class 'float'>");
  });

  it('merge substitutes references, joining lists with the first delimiter', () => {
    const r = canvas({ 'sys.query': 'q', 'Agent:A@items': ['x', 2, { k: 'v' }], 'a@obj': { n: 1 }, 'a@none': null, 'a@evil': '{sys.query}' });
    expect(merge({ script: '[{sys.query}] {Agent:A@items} {a@obj} <{a@none}> {a@evil}', delimiters: [' | ', ','] }, r)).toBe(
      '[q] x | 2 | {"k": "v"} {"n": 1} <> {sys.query}',
    );
    expect(merge({ script: 'no refs {here}' }, r)).toBe('no refs {here}');
    expect(merge({ script: '{sys.query}!' }, r, { 'sys.query': 'from kwargs' })).toBe('from kwargs!');
    expect(merge({ script: '{Agent:A@items}' }, r)).toBe('x,2,{"k": "v"}');
  });

  it('stringTransform dispatches and checks parameters', () => {
    const r = canvas({ 'a@s': 'a;b' });
    expect(stringTransform({ method: 'split', split_ref: 'a@s', delimiters: [';'] }, r)).toEqual(['a', 'b']);
    expect(stringTransform({ method: 'merge', script: '<{a@s}>' }, r)).toBe('<a;b>');
    expect(stringTransform({ split_ref: 'a@s', delimiters: [';'] }, r, { line: 'c;d' })).toEqual(['c', 'd']);
    expect(() => checkStringTransformParams({ method: 'join' })).toThrow("Support method join is not supported, it should be in ['split', 'merge']");
    expect(() => checkStringTransformParams({ method: 'split', delimiters: [] })).toThrow('delimiters does not support empty value.');
    expect(() => stringTransform({ method: 'x' }, r)).toThrow('Support method x is not supported');
  });
});

describe('VariableAssigner', () => {
  const r = canvas({
    'env.list': ['a', 'b'],
    'env.nums': [1, 2],
    'env.str': 'text',
    'env.obj': { k: 1 },
    'sys.query': 'hello',
    'env.none': null,
  });

  it('overwrite takes the referenced value', () => {
    expect(assign('overwrite', 'old', 'env.list', r)).toEqual(['a', 'b']);
    expect(assign('overwrite', 'old', '{sys.query}', r)).toBe('hello');
    expect(() => assign('overwrite', 'old', 5, r)).toThrow("'overwrite' needs a variable reference");
  });

  it('clear resets by type', () => {
    expect(assign('clear', [1], undefined, r)).toEqual([]);
    expect(assign('clear', 'x', undefined, r)).toBe('');
    expect(assign('clear', { a: 1 }, undefined, r)).toEqual({});
    expect(assign('clear', true, undefined, r)).toBe(false);
    expect(assign('clear', 42, undefined, r)).toBe(0);
    expect(assign('clear', 4.2, undefined, r)).toBe(0);
    expect(assign('clear', null, undefined, r)).toBeNull();
  });

  it('set renders a template for string / unset variables, else takes the parameter', () => {
    expect(assign('set', 'old', 'Q: {sys.query} {env.nums}', r)).toBe('Q: hello [1, 2]');
    expect(assign('set', null, '{{sys.query}}', r)).toBe('hello');
    expect(assign('set', undefined, 'plain', r)).toBe('plain');
    expect(assign('set', 3, 9, r)).toBe(9);
    expect(assign('set', false, true, r)).toBe(true);
    expect(assign('set', [1], '{sys.query}', r)).toBe('{sys.query}');
    expect(assign('set', { a: 1 }, { b: 2 }, r)).toEqual({ b: 2 });
  });

  it('append / extend check list and element types, never mutate', () => {
    const cur = ['x'];
    expect(assign('append', cur, 'sys.query', r)).toEqual(['x', 'hello']);
    expect(cur).toEqual(['x']);
    expect(assign('append', null, 'sys.query', r)).toEqual(['hello']);
    expect(assign('append', [], 'env.obj', r)).toEqual([{ k: 1 }]);
    expect(assign('append', 'str', 'sys.query', r)).toBe('ERROR:VARIABLE_NOT_LIST');
    expect(assign('append', [1], 'sys.query', r)).toBe('ERROR:PARAMETER_NOT_LIST_ELEMENT_TYPE');
    expect(assign('append', [1.5], 'env.nums', r)).toBe('ERROR:PARAMETER_NOT_LIST_ELEMENT_TYPE');
    expect(assign('extend', ['z'], 'env.list', r)).toEqual(['z', 'a', 'b']);
    expect(assign('extend', undefined, 'env.list', r)).toEqual(['a', 'b']);
    expect(assign('extend', [1], 'env.list', r)).toBe('ERROR:PARAMETER_NOT_LIST_ELEMENT_TYPE');
    expect(assign('extend', [], 'env.nums', r)).toEqual([1, 2]);
    expect(assign('extend', ['a'], 'sys.query', r)).toBe('ERROR:PARAMETER_NOT_LIST');
    expect(assign('extend', 'a', 'env.list', r)).toBe('ERROR:VARIABLE_NOT_LIST');
  });

  it('remove_first / remove_last', () => {
    expect(assign('remove_first', [1, 2, 3], undefined, r)).toEqual([2, 3]);
    expect(assign('remove_last', [1, 2, 3], undefined, r)).toEqual([1, 2]);
    expect(assign('remove_first', [], undefined, r)).toEqual([]);
    expect(assign('remove_last', [], undefined, r)).toEqual([]);
    expect(assign('remove_first', 'abc', undefined, r)).toBe('ERROR:VARIABLE_NOT_LIST');
    expect(assign('remove_last', null, undefined, r)).toBe('ERROR:VARIABLE_NOT_LIST');
  });

  it('arithmetic needs numbers (not booleans) and refuses division by zero', () => {
    expect(assign('+=', 1, 2, r)).toBe(3);
    expect(assign('-=', 1, 2.5, r)).toBe(-1.5);
    expect(assign('*=', 3, 4, r)).toBe(12);
    expect(assign('/=', 7, 2, r)).toBe(3.5);
    expect(assign('/=', 7, 0, r)).toBe('ERROR:DIVIDE_BY_ZERO');
    for (const op of ['+=', '-=', '*=', '/=']) {
      expect(assign(op, '1', 2, r)).toBe('ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER');
      expect(assign(op, 1, '2', r)).toBe('ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER');
      expect(assign(op, true, 2, r)).toBe('ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER');
      expect(assign(op, null, 2, r)).toBe('ERROR:VARIABLE_NOT_NUMBER or PARAMETER_NOT_NUMBER');
    }
  });

  it('unknown operators are an error', () => {
    expect(() => assign('append-all', [], 'env.list', r)).toThrow("VariableAssigner: unsupported operator 'append-all'");
  });

  it('runAssignments applies items in order, each seeing the previous writes', () => {
    const c = canvas({ 'env.count': 1, 'env.log': [], 'sys.query': 'q' });
    const write = (ref: string, v: unknown): void => {
      c.vars[ref] = v;
    };
    runAssignments(
      [
        { variable: 'env.count', operator: '+=', parameter: 2 },
        { variable: '{env.count}', operator: '*=', parameter: 10 },
        { variable: 'env.log', operator: 'append', parameter: 'sys.query' },
        { variable: 'env.log', operator: 'append', parameter: 'sys.query' },
        { variable: 'env.log', operator: 'remove_first' },
        { variable: 'env.count', operator: '-=', parameter: 0 },
      ],
      c,
      write,
    );
    expect(c.vars['env.count']).toBe(30);
    expect(c.vars['env.log']).toEqual(['q']);
    runAssignments('not a list', c, write);
    expect(() => runAssignments([{ variable: 'env.count', operator: '+=' }], c, write)).toThrow('Variable is not complete.');
    expect(() => runAssignments([{ operator: 'clear', parameter: 'x' }], c, write)).toThrow('Variable is not complete.');
    expect(() => runAssignments([{ variable: 'env.count', parameter: 'x' }], c, write)).toThrow('Variable is not complete.');
    expect(() => runAssignments([null], c, write)).toThrow('Variable is not complete.');
  });
});

describe('VariableAggregator', () => {
  it('takes the first truthy value of each group', () => {
    const r = canvas({ 'a@x': '', 'b@x': 'B', 'c@x': 'C', 'a@zero': 0, 'a@list': [], 'b@list': [1], 'a@none': null });
    expect(
      aggregate(
        [
          { group_name: 'g1', variables: [{ value: 'a@x' }, { value: 'b@x' }, { value: 'c@x' }] },
          { group_name: 'g2', variables: [{ value: 'a@zero' }, { value: '{a@list}' }, 'b@list'] },
          { group_name: 'g3', variables: [{ value: 'a@none' }, { value: 'a@x' }] },
          { group_name: 'g4', variables: [{}, { value: 'c@x' }] },
        ],
        r,
      ),
    ).toEqual({ g1: 'B', g2: [1], g4: 'C' });
    // Stops at the first hit: later selectors are not read.
    r.reads.length = 0;
    aggregate([{ group_name: 'g', variables: [{ value: 'b@x' }, { value: 'nope@x' }] }], r);
    expect(r.reads).toEqual(['b@x']);
  });

  it('checkAggregatorGroups has RAGFlow\'s messages', () => {
    expect(() => checkAggregatorGroups([])).toThrow('[VariableAggregator] groups does not support empty value.');
    expect(() => checkAggregatorGroups([{ variables: [{ value: 'a@x' }] }])).toThrow('[VariableAggregator] group_name can not be empty!');
    expect(() => checkAggregatorGroups([{ group_name: 'g', variables: [] }])).toThrow('[VariableAggregator] variables of group `g` can not be empty');
    expect(() => checkAggregatorGroups([{ group_name: 'g', variables: 'a@x' }])).toThrow('[VariableAggregator] variables of group `g` should be a list of strings');
    expect(() => checkAggregatorGroups([{ group_name: 'g', variables: [{ value: 'a@x' }] }])).not.toThrow();
  });
});
