import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/**
 * The text of `workspace.proto`, read from beside this module (the build copies it into
 * `dist/workspace/`), so the `.proto` in the repo is the one schema.
 */
export const PROTO_TEXT = readFileSync(new URL('./workspace.proto', import.meta.url), 'utf8');

// keepCase: the record fields keep the proto's snake_case names, as PaddleX's Python does.
const root = protobuf.parse(PROTO_TEXT, { keepCase: true }).root;

/** Reflected message types of `package suitebackend`. */
export const MessageTypes = {
  Dataset: root.lookupType('suitebackend.Dataset'),
  Project: root.lookupType('suitebackend.Project'),
  Task: root.lookupType('suitebackend.Task'),
  PretrainedModel: root.lookupType('suitebackend.PretrainedModel'),
  ExportedModel: root.lookupType('suitebackend.ExportedModel'),
  Workspace: root.lookupType('suitebackend.Workspace'),
} as const;
