import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { PROTO_TEXT } from '../../src/workspace/index.js';
import { MessageTypes } from '../../src/workspace/schema.js';

describe('workspace schema', () => {
  it('the schema is the text of workspace.proto', async () => {
    const file = await readFile(new URL('../../src/workspace/workspace.proto', import.meta.url), 'utf8');
    expect(PROTO_TEXT).toBe(file);
    expect(file).toContain('package suitebackend;');
  });

  // The digest's field lists (reference/workspace-model.md §1), written out independently.
  const DIGEST: Record<string, [number, string, string][]> = {
    Dataset: [[1, 'id', 'string'], [2, 'name', 'string'], [3, 'desc', 'string'], [4, 'type', 'string'], [5, 'path', 'string'], [6, 'create_time', 'string']],
    Project: [[1, 'id', 'string'], [2, 'name', 'string'], [3, 'desc', 'string'], [4, 'type', 'string'], [5, 'did', 'string'], [6, 'path', 'string'], [7, 'create_time', 'string']],
    Task: [[1, 'id', 'string'], [2, 'name', 'string'], [3, 'desc', 'string'], [4, 'pid', 'string'], [5, 'path', 'string'], [6, 'create_time', 'string'], [7, 'parent_id', 'string']],
    PretrainedModel: [[1, 'id', 'string'], [2, 'name', 'string'], [3, 'model', 'string'], [4, 'type', 'string'], [5, 'pid', 'string'], [6, 'tid', 'string'], [7, 'create_time', 'string'], [8, 'path', 'string']],
    ExportedModel: [[1, 'id', 'string'], [2, 'name', 'string'], [3, 'model', 'string'], [4, 'type', 'string'], [5, 'pid', 'string'], [6, 'tid', 'string'], [7, 'create_time', 'string'], [8, 'path', 'string'], [9, 'exported_type', 'int32']],
    Workspace: [[1, 'version', 'string'], [2, 'path', 'string'], [3, 'datasets', 'map<string,Dataset>'], [4, 'projects', 'map<string,Project>'], [5, 'tasks', 'map<string,Task>'], [6, 'max_dataset_id', 'int32'], [7, 'max_project_id', 'int32'], [8, 'max_task_id', 'int32'], [9, 'current_time', 'string'], [10, 'max_pretrained_model_id', 'int32'], [11, 'pretrained_models', 'map<string,PretrainedModel>'], [12, 'max_exported_model_id', 'int32'], [13, 'exported_models', 'map<string,ExportedModel>']],
  };

  it.each(Object.keys(DIGEST))('%s has the digest fields, numbers and types', (name) => {
    const t = MessageTypes[name as keyof typeof MessageTypes];
    expect(t.fullName).toBe(`.suitebackend.${name}`);
    const got = t.fieldsArray
      .map((f) => [f.id, f.name, f.map ? `map<${(f as unknown as { keyType: string }).keyType},${f.type}>` : f.type] as [number, string, string])
      .sort((a, b) => a[0] - b[0]);
    expect(got).toEqual(DIGEST[name]);
    expect(t.fieldsArray.every((f) => !f.repeated && !f.required && !f.options?.proto3_optional)).toBe(true);
  });
});
