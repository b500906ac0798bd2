/**
 * Origin signatures of the mesh (issue 24, M1): every event and artifact travels signed by the
 * Ed25519 key of the replica that wrote it. The origin signs when it serves its own records;
 * relays serve the stored signature verbatim. An event's signature also covers
 * `prev_origin_seq` (the origin_seq of the origin's previous event, 0 for the first), which
 * chains an origin's events so a receiver can tell a contiguous answer from one with a hole.
 *
 * The signed bytes are a JSON array of the immutable fields in a fixed order; metadata is its
 * canonical text, artifact ids ascending — the forms every replica stores and serves.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { invalidArgument } from '../../core/errors.js';
import type { RemoteArtifact, RemoteEvent } from '../../stores/ports/logstream/records.js';

const EVENT_DOMAIN = 'mempalace-event-v1';
const ARTIFACT_DOMAIN = 'mempalace-artifact-v1';
const PUBLIC_KEY_RE = /^ed25519:([A-Za-z0-9_-]{43})$/;

/** The fields an event signature covers: every stored field a peer serves, minus the signature and chain link. */
export type SignedEventFields = Omit<RemoteEvent, 'sig' | 'prev_origin_seq'>;

/** The fields an artifact signature covers; the content itself is covered through its sha256. */
export type SignedArtifactFields = Omit<RemoteArtifact, 'content' | 'sig'>;

function eventBytes(e: SignedEventFields, prevOriginSeq: number): Buffer {
  return Buffer.from(JSON.stringify([
    EVENT_DOMAIN,
    e.id,
    e.origin_replica,
    e.origin_seq,
    prevOriginSeq,
    e.hlc,
    e.type,
    e.stream,
    e.room,
    e.topic,
    e.from_agent,
    e.to_agent,
    e.correlation_id,
    e.branch,
    e.base_commit,
    e.status,
    [...e.artifact_ids].sort(),
    e.body,
    e.created_at,
    e.metadata_json,
  ]), 'utf8');
}

function artifactBytes(a: SignedArtifactFields): Buffer {
  return Buffer.from(JSON.stringify([ARTIFACT_DOMAIN, a.id, a.kind, a.sha256, a.size_bytes, a.created_by, a.created_at, a.origin_replica, a.metadata_json]),
    'utf8');
}

const keyCache = new Map<string, KeyObject>();

/** The private key of a stored PKCS#8 PEM (cached: the same text gives the same key). */
export function privateKey(pem: string): KeyObject {
  let key = keyCache.get(pem);
  if (!key) {
    key = createPrivateKey(pem);
    keyCache.set(pem, key);
  }
  return key;
}

/** The text form of a replica's public key in the peers file and `mesh_peers`: `ed25519:<base64url of the 32 raw bytes>`. */
export function publicKeyText(signingKeyPem: string): string {
  const jwk = createPublicKey(privateKey(signingKeyPem)).export({ format: 'jwk' });
  return `ed25519:${String(jwk.x)}`;
}

/** A public key from its text form; `field` names where it came from in the error. */
export function parsePublicKey(text: unknown, field: string): KeyObject {
  const m = typeof text === 'string' ? PUBLIC_KEY_RE.exec(text.trim()) : null;
  if (!m) throw invalidArgument(field, 'ed25519_public_key', `${field} must look like ed25519:<43 base64url characters>`);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: m[1]! }, format: 'jwk' });
}

export function signEvent(signingKeyPem: string, e: SignedEventFields, prevOriginSeq: number): string {
  return sign(null, eventBytes(e, prevOriginSeq), privateKey(signingKeyPem)).toString('base64url');
}

export function signArtifact(signingKeyPem: string, a: SignedArtifactFields): string {
  return sign(null, artifactBytes(a), privateKey(signingKeyPem)).toString('base64url');
}

function verifies(key: KeyObject, bytes: Buffer, sig: string): boolean {
  if (!/^[A-Za-z0-9_-]{86}$/.test(sig)) return false;
  return verify(null, bytes, key, Buffer.from(sig, 'base64url'));
}

export function eventSignatureValid(key: KeyObject, e: SignedEventFields, prevOriginSeq: number, sig: string): boolean {
  return verifies(key, eventBytes(e, prevOriginSeq), sig);
}

export function artifactSignatureValid(key: KeyObject, a: SignedArtifactFields, sig: string): boolean {
  return verifies(key, artifactBytes(a), sig);
}
