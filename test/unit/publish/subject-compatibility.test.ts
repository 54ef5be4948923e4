/**
 * Setting a subject's compatibility level when other replicas set it at the same moment: the
 * registry answers 409 to all but the first, and the setting is repeated (bounded), since the
 * rule then exists and a PUT updates it.
 */
import { COMPATIBILITY } from '@kafkajs/confluent-schema-registry';
import { setSubjectCompatibility } from '../../../src/publish/schemas';
import { classifyFailure } from '../../../src/runtime/retry-policy';

const registry = { url: 'http://registry.test/apis/ccompat/v7', auth: undefined } as const;

/** A registry answering the given statuses in turn; records each request's method and URL. */
function answering(statuses: number[]) {
  const calls: string[] = [];
  const fetchFn = (async (url: string, init?: RequestInit) => {
    calls.push(`${init?.method} ${url}`);
    const status = statuses.shift()!;
    const body = status === 200 ? '{"compatibilityLevel":"BACKWARD"}' : '{"message":"A rule named \'COMPATIBILITY\' already exists."}';
    return new Response(body, { status });
  }) as unknown as typeof fetch;
  return { fetchFn, calls };
}

test('a 409 from a concurrent first setting is repeated, and the repeat settles it', async () => {
  const { fetchFn, calls } = answering([409, 200]);
  await expect(setSubjectCompatibility({ registry, fetchFn }, 'tb.events.coupon-expired-value', COMPATIBILITY.BACKWARD)).resolves.toBeUndefined();
  expect(calls).toEqual(Array(2).fill('PUT http://registry.test/apis/ccompat/v7/config/tb.events.coupon-expired-value'));
});

test('a conflict that outlasts three tries fails, retriable, with the status', async () => {
  const { fetchFn, calls } = answering([409, 409, 409, 200]);
  const failure = setSubjectCompatibility({ registry, fetchFn }, 's-value', COMPATIBILITY.BACKWARD);
  await expect(failure).rejects.toMatchObject({ code: 'REGISTRY_UNAVAILABLE', details: expect.objectContaining({ status: 409 }) });
  expect(classifyFailure(await failure.catch((e: unknown) => e))).toBe('retriable');
  expect(calls).toHaveLength(3);
});

test('a refusal other than a conflict is not repeated and is not retriable', async () => {
  const { fetchFn, calls } = answering([422]);
  const err = await setSubjectCompatibility({ registry, fetchFn }, 's-value', COMPATIBILITY.BACKWARD).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'REGISTRY_UNAVAILABLE', details: expect.objectContaining({ status: 422 }) });
  expect(classifyFailure(err)).toBe('deterministic');
  expect(calls).toHaveLength(1);
});
