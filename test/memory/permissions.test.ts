/**
 * Memories across tenants (through `ragloom serve`): a `me` memory is invisible to every other
 * user; a `team` memory only to members of its tenant.
 */
import { expect } from 'vitest';
import { test } from '../server/fixtures.js';

test('team memories are visible to members of the tenant only', async ({ api }) => {
  const make = async (name: string) => (await api.call('POST', '/memories', { name, memory_type: ['raw'], embd_id: 'ragloom-static-en-256@Builtin', llm_id: 'ragloom-extractive@Builtin' })).body.data;
  const mine = await make('mine');
  const shared = await make('shared');
  expect((await api.call('PUT', `/memories/${shared.id}`, { permissions: 'team' })).body.code).toBe(0);
  const admin = (await api.call('GET', `/memories/${mine.id}/config`)).body.data;
  const bob = (await api.call('POST', '/users', { email: 'bob@example.com', nickname: 'Bob' })).body.data;
  const as = { key: bob.api_key };
  // Not a member yet: neither memory, not even the team one.
  expect((await api.call('GET', `/memories/${shared.id}/config`, undefined, as)).body).toEqual({ code: 404, message: `Memory '${shared.id}' not found.`, data: null });
  expect((await api.call('GET', '/memories', undefined, as)).body.data).toEqual({ memory_list: [], total_count: 0 });
  expect((await api.call('GET', `/messages/search?query=x&memory_id=${shared.id}`, undefined, as)).body.data).toEqual([]);
  // A member of the admin's tenant sees the team memory, never the `me` one.
  expect((await api.call('POST', `/tenants/${admin.tenant_id}/members`, { user_id: bob.id ?? bob.user_id, role: 'normal' })).body.code).toBe(0);
  expect((await api.call('GET', `/memories/${shared.id}/config`, undefined, as)).body.data.name).toBe('shared');
  expect((await api.call('GET', `/memories/${mine.id}/config`, undefined, as)).body.code).toBe(404);
  expect((await api.call('GET', '/memories', undefined, as)).body.data.memory_list.map((m: { name: string }) => m.name)).toEqual(['shared']);
  expect((await api.call('POST', '/messages', { memory_id: [mine.id], agent_id: 'a', session_id: 's', user_input: 'x', agent_response: 'y' }, as)).body)
    .toMatchObject({ code: 500, message: 'Some messages failed to add. Detail:Memory not found.' });
});
