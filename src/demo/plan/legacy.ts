/**
 * The pre-standard, CryptoKitties-style collection (draft ERC-721): mints, transfers with its own
 * `transfer`, approvals of one spender per token, the approved spender pulling the token with
 * `transferFrom`, and sends to 0x…dEaD.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, DEAD_ADDRESS, GAS } from "../contracts.ts";
import { type PlanContext, tokenKey } from "./context.ts";

export function createLegacyPlanner({ world, prng, counts }: PlanContext) {
  function mint(touched: Set<string>): TxRequest[] | undefined {
    const c = world.legacy;
    if (!c) return undefined;
    const to = world.pickAccount(prng);
    c.totalSupply += 1n;
    c.setOwner(c.totalSupply, to, world.accountSet);
    touched.add(tokenKey(c.contract, c.totalSupply));
    counts.legacyMints++;
    return [callTx(to, c.contract.address, "LegacyERC721", "mint", [to], GAS.legacyMint)];
  }

  function heldLegacy(touched: Set<string>): { id: bigint; owner: Address } | undefined {
    const c = world.legacy;
    if (!c) return undefined;
    const id = c.held.pick(prng, (i) => !touched.has(tokenKey(c.contract, i)));
    if (id === undefined) return undefined;
    touched.add(tokenKey(c.contract, id));
    return { id, owner: c.owners.get(id) as Address };
  }

  /** A held token, to another account or to `to`. */
  function send(touched: Set<string>, to?: Address): TxRequest[] | undefined {
    const c = world.legacy;
    const token = heldLegacy(touched);
    if (!c || !token) return undefined;
    const recipient = to ?? world.pickAccount(prng, token.owner);
    c.setOwner(token.id, recipient, world.accountSet);
    if (recipient === DEAD_ADDRESS) counts.legacyDeadTransfers++;
    else counts.legacyTransfers++;
    return [
      callTx(
        token.owner,
        c.contract.address,
        "LegacyERC721",
        "transfer",
        [recipient, token.id],
        GAS.legacyTransfer,
      ),
    ];
  }

  function approve(touched: Set<string>): TxRequest[] | undefined {
    const c = world.legacy;
    const token = heldLegacy(touched);
    if (!c || !token) return undefined;
    const spender = world.pickAccount(prng, token.owner);
    c.approvals.set(token.id, spender);
    counts.legacyApprovals++;
    return [
      callTx(
        token.owner,
        c.contract.address,
        "LegacyERC721",
        "approve",
        [spender, token.id],
        GAS.legacyApprove,
      ),
    ];
  }

  /** The approved account pulls the token (draft ERC-721: only it may call transferFrom). */
  function pull(touched: Set<string>): TxRequest[] | undefined {
    const c = world.legacy;
    if (!c || c.approvals.size === 0) return undefined;
    const ids = [...c.approvals.keys()].filter((id) => !touched.has(tokenKey(c.contract, id)));
    if (ids.length === 0) return undefined;
    const id = prng.pick(ids);
    const spender = c.approvals.get(id) as Address;
    const owner = c.owners.get(id) as Address;
    touched.add(tokenKey(c.contract, id));
    c.setOwner(id, spender, world.accountSet);
    counts.legacyApprovedTransfers++;
    return [
      callTx(
        spender,
        c.contract.address,
        "LegacyERC721",
        "transferFrom",
        [owner, spender, id],
        GAS.legacyTransfer,
      ),
    ];
  }

  return {
    mint,
    transfer: (touched: Set<string>) => send(touched),
    approve,
    pull,
    sendToDead: (touched: Set<string>) => send(touched, DEAD_ADDRESS),
  };
}
