/**
 * A contract's spam verdict from what the store knows of it: each signal a pure test of the
 * contract's facts, with a weight; the score is the sum of the weights of the signals that fired,
 * capped at 100, and the contract is spam at `SPAM_THRESHOLD` or more.
 *
 * No signal weighs enough alone. Each has an honest look-alike: a project airdrops to its
 * community, a free mint has many holders and no sales yet, a new collection's name resembles a
 * famous one, a description links the project's site. Spam shows two or more at once (a spray of
 * a look-alike name that nobody buys), so the threshold asks for two: a false positive hides a
 * user's real NFT, which is worse than showing a spam one.
 */
import type { Address } from "../core/hex.ts";
import { findLure, type LureTexts } from "./lure.ts";
import { nameSkeleton, skeletonsNear } from "./names.ts";

/** Spam at this score or more: any two signals, never one (the largest weight is 45). */
export const SPAM_THRESHOLD = 60;

/** Distinct recipients of one unpaid transaction that make it a spray. */
export const SPRAY_RECIPIENTS = 50;
/** Recipients of sprays in all before the airdrop signal fires: one small giveaway is not enough. */
export const SPRAYED_TOTAL = 100;
/** Holders from which a collection nobody pays for is suspect. */
export const MANY_HOLDERS = 50;
/** Holders per organic sale or paid mint below which demand counts as none. */
export const HOLDERS_PER_PAYMENT = 100;
/** Holders of one ERC-1155 token id that make an edition a spray when none of it was ever paid for. */
export const EDITION_HOLDERS = 1_000;
/** A known collection is one with at least this many organic sales. */
export const KNOWN_MIN_SALES = 3;
/** An imitation has fewer than this share (1/N) of the known collection's organic sales. */
export const IMITATION_SALES_RATIO = 10;

export const SIGNAL_WEIGHTS = {
  /** Unpaid transactions that each handed tokens to many distinct addresses. */
  airdrop_spray: 40,
  /** Many holders, almost no organic sale or paid mint. */
  no_organic_demand: 25,
  /** The name of a collection with organic sales, on another contract without them. */
  imitation: 45,
  /** A site in a name, or a link with a bait word in a description. */
  lure_text: 40,
  /** One ERC-1155 token id held by thousands, never sold or paid for. */
  edition_spray: 40,
} as const;

export type SignalName = keyof typeof SIGNAL_WEIGHTS;

/** A signal that fired, with the figures it fired on. */
export interface FiredSignal {
  name: SignalName;
  weight: number;
  evidence: Record<string, string | number>;
}

export interface SpamVerdict {
  score: number;
  isSpam: boolean;
  signals: FiredSignal[];
}

/** What the store knows of a contract, as the signals read it. */
export interface ContractFacts {
  contract: Address;
  name: string;
  symbol: string;
  /** Addresses holding any of its tokens now. */
  holders: number;
  /** Organic sales (no wash rule, no rate outlier, priced), counted up to the store's bound. */
  organicSales: number;
  /** Mints the minter paid for. */
  paidMints: number;
  /** The contract's largest unpaid transactions, as recipients per transaction (see `SprayFacts`). */
  spray: SprayFacts;
  /** The ERC-1155 token id with the most holders, when the contract has any. */
  topEdition?: { tokenId: bigint; holders: number; payments: number } | undefined;
  /** Names and descriptions to look for lures in. */
  texts: Omit<LureTexts, "contractName" | "contractSymbol">;
}

/** The contract's transfers without a payment, grouped by transaction, over the window the store reads. */
export interface SprayFacts {
  /** Distinct recipients of its largest unpaid transaction. */
  largest: number;
  /** Unpaid transactions with at least `SPRAY_RECIPIENTS` recipients. */
  sprays: number;
  /** Distinct recipients of those transactions, summed. */
  sprayed: number;
  /** Transfers read. */
  transfers: number;
}

/** A collection with organic sales: what imitations imitate. */
export interface KnownCollection {
  contract: Address;
  name: string;
  organicSales: number;
  /** `nameSkeleton(name)`, made once. */
  skeleton: string;
}

export function knownCollection(contract: Address, name: string, organicSales: number): KnownCollection {
  return { contract, name, organicSales, skeleton: nameSkeleton(name) };
}

/** The verdict of one contract: every signal tested, the fired ones summed. Pure. */
export function judgeContract(facts: ContractFacts, known: readonly KnownCollection[]): SpamVerdict {
  const signals: FiredSignal[] = [];
  const fire = (name: SignalName, evidence: Record<string, string | number>) =>
    signals.push({ name, weight: SIGNAL_WEIGHTS[name], evidence });

  const { spray } = facts;
  if (spray.largest >= SPRAY_RECIPIENTS && spray.sprayed >= SPRAYED_TOTAL) {
    fire("airdrop_spray", {
      largestTxRecipients: spray.largest,
      sprayTxs: spray.sprays,
      sprayedRecipients: spray.sprayed,
      transfersRead: spray.transfers,
    });
  }

  const payments = facts.organicSales + facts.paidMints;
  if (facts.holders >= MANY_HOLDERS && payments * HOLDERS_PER_PAYMENT < facts.holders) {
    fire("no_organic_demand", {
      holders: facts.holders,
      organicSales: facts.organicSales,
      paidMints: facts.paidMints,
    });
  }

  const original = imitated(facts, known);
  if (original !== undefined) {
    fire("imitation", {
      imitates: original.contract,
      imitatedName: original.name,
      imitatedOrganicSales: original.organicSales,
      organicSales: facts.organicSales,
    });
  }

  const lure = findLure({ contractName: facts.name, contractSymbol: facts.symbol, ...facts.texts });
  if (lure !== undefined) fire("lure_text", { where: lure.where, text: lure.text });

  const edition = facts.topEdition;
  if (edition !== undefined && edition.holders >= EDITION_HOLDERS && edition.payments === 0) {
    fire("edition_spray", { tokenId: edition.tokenId.toString(), holders: edition.holders, payments: 0 });
  }

  const score = Math.min(
    100,
    signals.reduce((sum, s) => sum + s.weight, 0),
  );
  return { score, isSpam: score >= SPAM_THRESHOLD, signals };
}

/**
 * The known collection this contract's name imitates: another contract, with at least
 * `KNOWN_MIN_SALES` organic sales and more than `IMITATION_SALES_RATIO` times this one's. The
 * best-selling such collection when several match.
 */
export function imitated(
  facts: Pick<ContractFacts, "contract" | "name" | "organicSales">,
  known: readonly KnownCollection[],
): KnownCollection | undefined {
  let best: KnownCollection | undefined;
  const skeleton = nameSkeleton(facts.name);
  for (const k of known) {
    if (k.contract === facts.contract || k.organicSales < KNOWN_MIN_SALES) continue;
    if (facts.organicSales * IMITATION_SALES_RATIO >= k.organicSales) continue;
    if (!skeletonsNear(skeleton, k.skeleton)) continue;
    if (best === undefined || k.organicSales > best.organicSales) best = k;
  }
  return best;
}
