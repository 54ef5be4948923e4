/**
 * The schema-registry client for our events, with Avro longs exact (exact-long.ts).
 *
 * Every place that encodes or decodes our events builds its client here — `schemas register`, the
 * demo, tests — so an id beyond 2^53 is written and read exactly everywhere. A client built with
 * `new SchemaRegistry({ host })` alone would refuse such an id when encoding and round it when
 * decoding.
 *
 * csr passes `options[SchemaType.AVRO]` to avsc's Type.forSchema for every schema it parses
 * (register, encode and decode alike; read in its dist/schemaTypeResolver.js and AvroHelper.js).
 */
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { ProtocolOptions } from '@kafkajs/confluent-schema-registry/dist/@types';
import type { Config } from '../config';
import { exactLongHook } from './exact-long';

export const eventAvroOptions: ProtocolOptions = Object.freeze({ [SchemaType.AVRO]: { typeHook: exactLongHook } });

/** `auth`: basic auth (TB_REGISTRY_USERNAME/PASSWORD, or the URL's user info) on every request. */
export function createSchemaRegistry(registry: Config['registry']): SchemaRegistry {
  return new SchemaRegistry({ host: registry.url, ...(registry.auth !== undefined && { auth: { ...registry.auth } }) }, eventAvroOptions);
}

/** The Authorization header of the registry's basic auth, for the calls csr does not make. */
export function registryAuthHeaders(auth: Config['registry']['auth']): Record<string, string> {
  if (auth === undefined) return {};
  return { Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` };
}
