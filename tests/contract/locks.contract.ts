/**
 * The lease contract of the `Locks` port, written once and run against every adapter: one holder
 * per key, expiry, fencing tokens that only grow, and stale tokens refused.
 */
import { describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import type { Locks } from '../../stores/ports/locks.js';
import { openForEachTest } from '../helpers/each-test.js';

export interface OpenedLocks {
  locks: Locks;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const staleError = (p: Promise<unknown>) => rejectionOf(p, 'a stale_lease PalaceError');

export function describeLocksContract(adapterName: string, open: () => Promise<OpenedLocks>): void {
  describe(`Locks contract — ${adapterName}`, () => {
    let locks: Locks;
    openForEachTest(open, (opened) => (locks = opened.locks));

    it('grants a key to one holder at a time, even to the same holder twice', async () => {
      const a = await locks.acquire('palace/src', 'worker-a', 10_000);
      expect(a).not.toBeNull();
      expect(await locks.acquire('palace/src', 'worker-b', 10_000)).toBeNull();
      expect(await locks.acquire('palace/src', 'worker-a', 10_000)).toBeNull();
      const h = await locks.holder('palace/src');
      expect(h).toMatchObject({ holder: 'worker-a', token: a!.token });
      expect(h!.expiresAtMs).toBeGreaterThan(Date.now());
      expect(await locks.acquire('palace/other', 'worker-b', 10_000)).not.toBeNull();
      expect(await locks.holder('palace/none')).toBeNull();
    });

    it('hands the key to another holder after release, with a greater token', async () => {
      const a = (await locks.acquire('k', 'a', 10_000))!;
      expect(await locks.release('k', 'b', a.token)).toBe(false);
      expect(await locks.release('k', 'a', a.token + 1)).toBe(false);
      expect((await locks.holder('k'))?.holder).toBe('a');
      expect(await locks.release('k', 'a', a.token)).toBe(true);
      expect(await locks.holder('k')).toBeNull();
      const b = (await locks.acquire('k', 'b', 10_000))!;
      expect(b.token).toBeGreaterThan(a.token);
      expect(await locks.release('k', 'a', a.token)).toBe(false);
      expect((await locks.holder('k'))?.holder).toBe('b');
    });

    it('expires a lease that is not renewed, and renewal keeps it alive', async () => {
      const a = (await locks.acquire('k', 'a', 300))!;
      await sleep(150);
      expect(await locks.renew('k', 'a', a.token, 600)).toBe(true);
      await sleep(250);
      expect((await locks.holder('k'))?.token).toBe(a.token);
      expect(await locks.acquire('k', 'b', 1_000)).toBeNull();
      await sleep(450);
      expect(await locks.holder('k')).toBeNull();
      expect(await locks.renew('k', 'a', a.token, 1_000)).toBe(false);
      const b = (await locks.acquire('k', 'b', 1_000))!;
      expect(b.token).toBeGreaterThan(a.token);
      expect(await locks.renew('k', 'a', a.token, 1_000)).toBe(false);
      expect(await locks.renew('k', 'b', b.token, 1_000)).toBe(true);
    });

    it('reclaims a lapsed lease nobody replaced, under the same token and for its holder only', async () => {
      const a = (await locks.acquire('late', 'a', 80))!;
      expect(await locks.reclaim('late', 'a', a.token, 10_000)).toBe(true);
      expect((await locks.holder('late'))?.expiresAtMs).toBeGreaterThan(Date.now() + 5_000);
      const short = (await locks.acquire('lapse', 'a', 80))!;
      await sleep(150);
      expect(await locks.holder('lapse')).toBeNull();
      expect(await locks.renew('lapse', 'a', short.token, 10_000)).toBe(false);
      expect(await locks.reclaim('lapse', 'b', short.token, 10_000)).toBe(false);
      expect(await locks.reclaim('lapse', 'a', short.token + 1, 10_000)).toBe(false);
      expect(await locks.reclaim('lapse', 'a', short.token, 10_000)).toBe(true);
      await locks.check('lapse', short.token);
      expect(await locks.acquire('lapse', 'b', 10_000)).toBeNull();
      expect(await locks.renew('lapse', 'a', short.token, 80)).toBe(true);
      await sleep(150);
      const b = (await locks.acquire('lapse', 'b', 10_000))!;
      expect(await locks.reclaim('lapse', 'a', short.token, 10_000)).toBe(false);
      expect((await locks.holder('lapse'))?.token).toBe(b.token);
      expect(await locks.release('lapse', 'b', b.token)).toBe(true);
      expect(await locks.reclaim('lapse', 'b', b.token, 10_000)).toBe(false);
      expect(await locks.holder('lapse')).toBeNull();
    });

    it('issues strictly increasing tokens per key across acquisitions, releases and expiries', async () => {
      const tokens: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = (await locks.acquire('mono', `h${i}`, 10_000))!;
        tokens.push(t.token);
        await locks.release('mono', `h${i}`, t.token);
      }
      const expiring = (await locks.acquire('mono', 'x', 50))!;
      tokens.push(expiring.token);
      await sleep(120);
      tokens.push((await locks.acquire('mono', 'y', 10_000))!.token);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
      expect(tokens.every(Number.isSafeInteger)).toBe(true);
    });

    it('refuses a stale token with stale_lease and accepts the current one', async () => {
      const a = (await locks.acquire('fence', 'a', 80))!;
      await locks.check('fence', a.token);
      await sleep(150);
      const expired = await staleError(locks.check('fence', a.token));
      expect(expired.code).toBe('stale_lease');
      const b = (await locks.acquire('fence', 'b', 10_000))!;
      await locks.check('fence', b.token);
      const zombie = await staleError(locks.check('fence', a.token));
      expect(zombie.code).toBe('stale_lease');
      expect(zombie.details).toMatchObject({ key: 'fence', token: a.token, current_token: b.token });
      await locks.release('fence', 'b', b.token);
      expect((await staleError(locks.check('fence', b.token))).code).toBe('stale_lease');
    });

    it('refuses malformed arguments naming the field', async () => {
      await expect(locks.acquire('', 'a', 1_000)).rejects.toMatchObject({ code: 'invalid_argument', field: 'key' });
      await expect(locks.acquire('k', '', 1_000)).rejects.toMatchObject({ code: 'invalid_argument', field: 'holder' });
      await expect(locks.acquire('k', 'a', 0)).rejects.toMatchObject({ code: 'invalid_argument', field: 'ttl_ms' });
      await expect(locks.renew('k', 'a', 1.5, 1_000)).rejects.toMatchObject({ code: 'invalid_argument', field: 'token' });
      await expect(locks.reclaim('k', 'a', 1, -5)).rejects.toMatchObject({ code: 'invalid_argument', field: 'ttl_ms' });
    });
  });
}
