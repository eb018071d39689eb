/**
 * Components that route and reshape data: Switch, VariableAssigner, VariableAggregator,
 * StringTransform. The operations themselves (RAGFlow's semantics, messages) are in src/agent/ops.
 */
import type { ComponentImpl } from '../node.js';
import {
  aggregate, checkAggregatorGroups, checkSwitchParams, runAssignments, selectBranch, stringTransform,
  type AggregatorGroup, type StringTransformParams, type SwitchCondition,
} from '../ops/index.js';
import { resolver } from './resolve.js';

export const SWITCH: ComponentImpl = {
  async invoke(n, c) {
    checkSwitchParams({ conditions: n.params.conditions, end_cpn_ids: n.params.end_cpn_ids });
    const resolve = await resolver(n, c);
    const next = selectBranch(n.params.conditions as SwitchCondition[], (n.params.end_cpn_ids ?? []) as string[], resolve, (ref, v) => n.setInput(ref, v));
    n.setOutput('_next', next);
  },
};

export const VARIABLE_ASSIGNER: ComponentImpl = {
  async invoke(n, c) {
    const resolve = await resolver(n, c);
    runAssignments(n.params.variables, resolve, (ref, v) => {
      c.setVariableValue(ref, v);
      n.setInput(ref, v);
    });
  },
};

export const VARIABLE_AGGREGATOR: ComponentImpl = {
  async invoke(n, c) {
    checkAggregatorGroups(n.params.groups);
    const resolve = await resolver(n, c);
    for (const [k, v] of Object.entries(aggregate(n.params.groups as AggregatorGroup[], resolve))) n.setOutput(k, v);
  },
};

export const STRING_TRANSFORM: ComponentImpl = {
  async invoke(n, c, kwargs) {
    const resolve = await resolver(n, c);
    n.setOutput('result', stringTransform(n.params as StringTransformParams, resolve, kwargs));
  },
};
