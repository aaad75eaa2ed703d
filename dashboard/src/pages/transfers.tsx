/** A table of transfers (ListNftTransfers): when, which token, from whom to whom, the price, the labels. */
import { Labels, TokenLink, WalletLink } from "../components/ui.tsx";
import { amount, count, time, usd } from "../format.ts";

export interface Paid {
  totalNative: string | null;
  totalUsd: string | null;
  nativeTransfersTotal?: string;
  fungibleTransfersTotal?: string;
  attributedBy?: string;
  fungibleTotals?: { contractAddress: string; totalNormalized: string }[];
}

export interface Transfer {
  blockchainEvent: { txHash: string; logIndex: string; blockNumber: string; blockTimestamp: string };
  contractAddress: string;
  tokenId: string;
  quantity: string;
  sender?: { address: string } | null;
  recipient?: { address: string } | null;
  recipientPaid?: Paid | null;
  labels: string[];
}

export interface TransfersAnswer {
  nftTransfers: Transfer[];
  nextPageToken: string;
}

const ZERO = "0x0000000000000000000000000000000000000000";

function Party({ address }: { address: string | undefined }) {
  if (address === undefined || address === ZERO) return <span class="muted">—</span>;
  return <WalletLink address={address} />;
}

export function TransferTable({
  id,
  transfers,
  caption,
  showToken,
}: {
  id: string;
  transfers: readonly Transfer[];
  caption: string;
  showToken: boolean;
}) {
  return (
    <div class="scroll">
      <table data-table={id} data-rows={transfers.length}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            {showToken && <th scope="col">Token</th>}
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col" class="num">
              Qty
            </th>
            <th scope="col" class="num">
              Price
            </th>
            <th scope="col" class="num">
              USD
            </th>
            <th scope="col">Labels</th>
          </tr>
        </thead>
        <tbody>
          {transfers.map((t) => (
            <tr
              key={`${t.blockchainEvent.txHash}:${t.blockchainEvent.logIndex}`}
              data-tx={t.blockchainEvent.txHash}
            >
              <td>{time(t.blockchainEvent.blockTimestamp)}</td>
              {showToken && (
                <td>
                  <TokenLink address={t.contractAddress} tokenId={t.tokenId} />
                </td>
              )}
              <td>
                <Party address={t.sender?.address} />
              </td>
              <td>
                <Party address={t.recipient?.address} />
              </td>
              <td class="num">{count(t.quantity)}</td>
              <td class="num">{amount(t.recipientPaid?.totalNative)}</td>
              <td class="num">{usd(t.recipientPaid?.totalUsd)}</td>
              <td>
                <Labels labels={t.labels} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
