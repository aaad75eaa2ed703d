/**
 * Seaport 1.6 orders as the demo makes them: open (no zone), with no conduit (the offerer approves
 * Seaport itself), valid from time 0 on, and validated on chain by their offerer (`validate`), so
 * no signature is needed to fulfil them.
 *
 * A listing offers one ERC-721 for ETH or an ERC-20; an offer (a bid) offers WETH for one ERC-721.
 * Either way the consideration is the seller's proceeds (or the NFT, for an offer), then the
 * market's fee and the creator's royalty, paid in the order's currency.
 */
import { type Address, type Hex, ZERO_ADDRESS } from "../../core/hex.ts";

const ZERO_HASH: Hex = `0x${"0".repeat(64)}`;
/** Far in the future: the orders never expire. */
const END_TIME = 2n ** 64n;

/** Seaport's ItemType. */
const ItemType = { Native: 0, Erc20: 1, Erc721: 2 } as const;

/** BasicOrderType: the order type (0, full open) plus 4 × the route. */
const BASIC_ETH_TO_ERC721 = 0;
const BASIC_ERC20_TO_ERC721 = 8;
const BASIC_ERC721_TO_ERC20 = 16;

export interface SeaportOrder {
  offerer: Address;
  nft: Address;
  tokenId: bigint;
  /** null: ETH. */
  currency: Address | null;
  /** What the buyer pays in all: the seller's proceeds, the fee and the royalty. */
  price: bigint;
  fee: { recipient: Address; amount: bigint };
  royalty: { recipient: Address; amount: bigint };
  salt: bigint;
  /** A listing (the offerer sells the NFT) or an offer (the offerer bids with `currency`). */
  side: "listing" | "offer";
}

/** OrderParameters, as `validate` and the advanced fulfilments take them. */
export function orderParameters(order: SeaportOrder) {
  const currencyType = order.currency === null ? ItemType.Native : ItemType.Erc20;
  const currency = order.currency ?? ZERO_ADDRESS;
  const payment = (amount: bigint, recipient: Address) => ({
    itemType: currencyType,
    token: currency,
    identifierOrCriteria: 0n,
    startAmount: amount,
    endAmount: amount,
    recipient,
  });
  const nft = { itemType: ItemType.Erc721, token: order.nft, identifierOrCriteria: order.tokenId };
  const proceeds = order.price - order.fee.amount - order.royalty.amount;
  const offer =
    order.side === "listing"
      ? [{ ...nft, startAmount: 1n, endAmount: 1n }]
      : [
          {
            itemType: currencyType,
            token: currency,
            identifierOrCriteria: 0n,
            startAmount: order.price,
            endAmount: order.price,
          },
        ];
  const first =
    order.side === "listing"
      ? payment(proceeds, order.offerer)
      : { ...nft, startAmount: 1n, endAmount: 1n, recipient: order.offerer };
  const consideration = [
    first,
    payment(order.fee.amount, order.fee.recipient),
    payment(order.royalty.amount, order.royalty.recipient),
  ];
  return {
    offerer: order.offerer,
    zone: ZERO_ADDRESS,
    offer,
    consideration,
    orderType: 0,
    startTime: 0n,
    endTime: END_TIME,
    zoneHash: ZERO_HASH,
    salt: order.salt,
    conduitKey: ZERO_HASH,
    totalOriginalConsiderationItems: BigInt(consideration.length),
  };
}

/** The argument of `validate(Order[])` for one order. */
export function validateArgs(order: SeaportOrder): unknown[] {
  return [[{ parameters: orderParameters(order), signature: "0x" }]];
}

/** The argument of `fulfillBasicOrder` for one order, as its fulfiller sends it. */
export function basicOrderArgs(order: SeaportOrder): unknown[] {
  const additionalRecipients = [
    { amount: order.fee.amount, recipient: order.fee.recipient },
    { amount: order.royalty.amount, recipient: order.royalty.recipient },
  ];
  const common = {
    offerer: order.offerer,
    zone: ZERO_ADDRESS,
    startTime: 0n,
    endTime: END_TIME,
    zoneHash: ZERO_HASH,
    salt: order.salt,
    offererConduitKey: ZERO_HASH,
    fulfillerConduitKey: ZERO_HASH,
    totalOriginalAdditionalRecipients: BigInt(additionalRecipients.length),
    additionalRecipients,
    signature: "0x",
  };
  if (order.side === "listing") {
    return [
      {
        ...common,
        considerationToken: order.currency ?? ZERO_ADDRESS,
        considerationIdentifier: 0n,
        considerationAmount: order.price - order.fee.amount - order.royalty.amount,
        offerToken: order.nft,
        offerIdentifier: order.tokenId,
        offerAmount: 1n,
        basicOrderType: order.currency === null ? BASIC_ETH_TO_ERC721 : BASIC_ERC20_TO_ERC721,
      },
    ];
  }
  return [
    {
      ...common,
      considerationToken: order.nft,
      considerationIdentifier: order.tokenId,
      considerationAmount: 1n,
      offerToken: order.currency ?? ZERO_ADDRESS,
      offerIdentifier: 0n,
      offerAmount: order.price,
      basicOrderType: BASIC_ERC721_TO_ERC20,
    },
  ];
}

/**
 * The arguments of `fulfillAvailableAdvancedOrders` filling every order whole for `recipient`:
 * each offer item and each consideration item a fulfilment of its own.
 */
export function fulfillAvailableArgs(orders: readonly SeaportOrder[], recipient: Address): unknown[] {
  const advanced = orders.map((order) => ({
    parameters: orderParameters(order),
    numerator: 1n,
    denominator: 1n,
    signature: "0x",
    extraData: "0x",
  }));
  const offerFulfillments = orders.map((_, i) => [{ orderIndex: BigInt(i), itemIndex: 0n }]);
  const considerationFulfillments = advanced.flatMap((order, i) =>
    order.parameters.consideration.map((_, j) => [{ orderIndex: BigInt(i), itemIndex: BigInt(j) }]),
  );
  return [
    advanced,
    [],
    offerFulfillments,
    considerationFulfillments,
    ZERO_HASH,
    recipient,
    BigInt(orders.length),
  ];
}
