/**
 * Topic tunnels after a mine, as a user gets them from the `mempalace` command (embedded
 * profile): wings whose `topics_by_wing` in the entity registry share a topic are joined by a
 * `topic:<Topic>` tunnel once one of them is mined; a conversations mine makes none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedJsonCli } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-topics-'));
const registry = path.join(tmp, 'known_entities.json');

const mempalace = embeddedJsonCli<unknown>(path.join(tmp, 'palace'), { MEMPALACE_ENTITY_REGISTRY: registry });

const tunnels = () => mempalace('tunnels', 'list').json as { source: { wing: string; room: string }; target: { wing: string; room: string }; label: string }[];

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('topic tunnels after a mine', () => {
  it('joins the mined wing to each wing sharing a registry topic, and a conversations mine adds none', () => {
    fs.writeFileSync(registry, JSON.stringify({ people: [], topics_by_wing: { harbour: ['Tides', 'Storms'], fleet: ['tides'], depot: ['Cranes'] } }));
    const project = path.join(tmp, 'harbour');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'tides.md'), 'High water at the outer gate comes forty minutes after the inner gate.\n'.repeat(3));
    const mined = mempalace('mine', project, '--wing', 'harbour');
    expect(mined.json).toMatchObject({ state: 'completed', files_mined: 1 });
    expect(tunnels().map((t) => ({ source: t.source, target: t.target, label: t.label }))).toEqual([
      { source: { wing: 'fleet', room: 'topic:tides' }, target: { wing: 'harbour', room: 'topic:tides' }, label: 'shared topic: tides' },
    ]);

    const chats = path.join(tmp, 'chats');
    fs.mkdirSync(chats);
    fs.writeFileSync(path.join(chats, 'crane.txt'), '> When is the crane serviced?\nEvery second Monday, before the first shift.\n');
    fs.writeFileSync(registry, JSON.stringify({ topics_by_wing: { harbour: ['Tides'], fleet: ['tides'], depot: ['Cranes'], yard: ['cranes'] } }));
    expect(mempalace('mine', chats, '--mode', 'convos', '--wing', 'depot').json).toMatchObject({ state: 'completed' });
    expect(tunnels()).toHaveLength(1);
  });
});
