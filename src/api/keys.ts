import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * API keys. A key reads
 *
 *     ml_3f9a0c1e2b7d4a5c_q8Zr0m...43 characters...Xw
 *     └┬┘└──────┬───────┘ └───────────┬────────────┘
 *   prefix   key id: 8 random      secret: 32 random bytes,
 *            bytes, hex            base64url without padding
 *
 * The key id is not secret: it names the key in listings and finds its row, so that a
 * presented key is checked against one stored hash, not against every user's. The secret is
 * stored only as its SHA-256. A slow password hash (scrypt, argon2) guards low-entropy
 * secrets chosen by people against guessing from a stolen table; a secret of 256 random bits
 * cannot be guessed whatever the hash, and a fast hash keeps checking a key per request cheap.
 */

export const KEY_PREFIX = "ml_";
const ID_BYTES = 8;
const SECRET_BYTES = 32;
const ID_LENGTH = ID_BYTES * 2;
/** base64url of 32 bytes without padding. */
const SECRET_LENGTH = Math.ceil((SECRET_BYTES * 4) / 3);
export const KEY_LENGTH = KEY_PREFIX.length + ID_LENGTH + 1 + SECRET_LENGTH;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}([0-9a-f]{${ID_LENGTH}})_([A-Za-z0-9_-]{${SECRET_LENGTH}})$`);

export interface ParsedKey {
  /** The key's public name: 16 hex digits. */
  keyId: string;
  secret: string;
}

export interface NewKey extends ParsedKey {
  /** The whole key, to hand to its user once. */
  key: string;
  /** What is stored in place of the secret. */
  hash: Buffer;
}

/** A fresh random key: 64 bits of key id and 256 bits of secret from the system's CSPRNG. */
export function generateKey(): NewKey {
  const keyId = randomBytes(ID_BYTES).toString("hex");
  const secret = randomBytes(SECRET_BYTES).toString("base64url");
  return { key: `${KEY_PREFIX}${keyId}_${secret}`, keyId, secret, hash: hashSecret(secret) };
}

/** The parts of a well-formed key; undefined for anything else, which no stored key can match. */
export function parseKey(presented: string): ParsedKey | undefined {
  // The length first: a header of any size is turned away before the pattern reads it.
  if (presented.length !== KEY_LENGTH) return undefined;
  const match = KEY_PATTERN.exec(presented);
  if (!match) return undefined;
  return { keyId: match[1] as string, secret: match[2] as string };
}

export function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/**
 * Whether `secret` is the one whose hash is `storedHash`, in time that does not depend on where
 * they differ. Both sides are SHA-256 digests, so `timingSafeEqual` always compares 32 bytes
 * with 32, whatever the length of what was presented; a stored value of another length (which
 * the table's constraint forbids) is refused rather than thrown on.
 */
export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const presented = hashSecret(secret);
  if (storedHash.length !== presented.length) return false;
  return timingSafeEqual(presented, storedHash);
}

/** How a key's id is shown in listings and logs: the start of the key itself. */
export function displayKeyId(keyId: string): string {
  return `${KEY_PREFIX}${keyId}`;
}

/** A user's name: 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit. */
const USER_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const USER_RULE =
  "1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit";

export function isValidUserName(name: string): boolean {
  return USER_PATTERN.test(name);
}
