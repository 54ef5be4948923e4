/**
 * Event schema registration by several processes at once, against the real registry: a new
 * deployment (or a new event topic) starts every replica of every role together, and each
 * registers the same new subjects. The registry answers one of two concurrent first
 * compatibility settings of a subject with 409 ("rule already exists"); that must not stop a
 * process, since the level it wanted is the one now set.
 *
 * @lane isolated
 */
import { createSchemaRegistry } from '../../../src/publish/schema-registry';
import { registerEventSchemas } from '../../../src/publish/schemas';
import { config } from '../../support/stack';
import { catalogue, uniqueEventTopics } from './outbox-fixtures';

test('processes registering the same new subjects at once all succeed, with the same ids', async () => {
  // Several rounds of new subjects: the race is the registry's, so each round is a new chance at it.
  for (let round = 0; round < 3; round += 1) {
    const topics = uniqueEventTopics(`race${round}`);
    const processes = Array.from({ length: 4 }, () =>
      registerEventSchemas(createSchemaRegistry(config.registry), catalogue, topics, { registry: config.registry }),
    );
    const ids = await Promise.all(processes);
    expect(Object.keys(ids[0]!).sort()).toEqual(catalogue.events.map((e) => e.type).sort());
    for (const other of ids.slice(1)) expect(other).toEqual(ids[0]);
  }
});
