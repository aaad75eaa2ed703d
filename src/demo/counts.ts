/**
 * What the demo's generation did, counted by kind: the summaries of a history and of live activity
 * carry these, and the tests check the chain's logs against them. A module of its own, below every
 * planner, so that each planner counts what it plans without importing another.
 */

export const ACTIVITY_COUNTERS = [
  "deployments",
  "erc721Mints",
  "erc721BatchMints",
  "erc721BatchMintedTokens",
  "erc721Transfers",
  "erc721Burns",
  "erc721DeadTransfers",
  "erc721Listings",
  "erc721Sales",
  "consecutiveMinted",
  "consecutiveMints",
  "consecutiveTransfers",
  "consecutiveBurns",
  "consecutiveDeadTransfers",
  "erc1155Mints",
  "erc1155BatchMints",
  "erc1155Transfers",
  "erc1155BatchTransfers",
  "erc1155Burns",
  "erc1155BatchBurns",
  "erc1155DeadTransfers",
  "legacyMints",
  "legacyTransfers",
  "legacyApprovals",
  "legacyApprovedTransfers",
  "legacyDeadTransfers",
  "punksAssigned",
  "punksClaimed",
  "punkTransfers",
  "punkOffers",
  "punkOffersCancelled",
  "punkSales",
  "punkBids",
  "punkBidSales",
  "punkBidsWithdrawn",
  "punkWithdrawals",
  "erc20Mints",
  "erc20Transfers",
  "erc20Approvals",
  "approvalsForAll",
  "seaportListings",
  "seaportSales",
  "seaportStableSales",
  "seaportOffers",
  "seaportOfferSales",
  "seaportSweeps",
  "seaportSweptTokens",
  "escrowListings",
  "escrowBundles",
  "escrowSales",
  "escrowRefunds",
  "escrowSweeps",
  "dealSales",
  "washPairs",
  "paidMints",
  "poolSwaps",
  /** ERC-721 Transfer logs of the trading above (two per token an aggregator passes on). */
  "nftTradeTransfers",
] as const;
export type ActivityCounter = (typeof ACTIVITY_COUNTERS)[number];
export type ActivityCounts = Record<ActivityCounter, number>;

export function emptyCounts(): ActivityCounts {
  return Object.fromEntries(ACTIVITY_COUNTERS.map((c) => [c, 0])) as ActivityCounts;
}
