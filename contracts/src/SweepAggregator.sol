// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC1155} from "@openzeppelin/contracts/token/ERC1155/IERC1155.sol";
import {ERC1155Holder} from "@openzeppelin/contracts/token/ERC1155/utils/ERC1155Holder.sol";
import {EscrowMarket} from "./EscrowMarket.sol";

/// @notice Buys several ETH listings in one call, as aggregators sweep a collection: the market
/// delivers to the aggregator, which hands each NFT on to the caller and sends back the ETH it
/// did not spend. The NFTs pass through it and the caller's payment is not what any seller got.
contract SweepAggregator is ERC1155Holder {
    error RefundFailed();

    function sweep(EscrowMarket market, uint256[] calldata listingIds) external payable {
        uint256 spent = 0;
        for (uint256 i = 0; i < listingIds.length; ++i) {
            (,, uint256 price,) = market.listings(listingIds[i]);
            market.buy{value: price}(listingIds[i]);
            spent += price;
            EscrowMarket.Item[] memory items = market.itemsOf(listingIds[i]);
            for (uint256 j = 0; j < items.length; ++j) {
                EscrowMarket.Item memory item = items[j];
                if (item.amount == 0) IERC721(item.nft).transferFrom(address(this), msg.sender, item.tokenId);
                else IERC1155(item.nft).safeTransferFrom(address(this), msg.sender, item.tokenId, item.amount, "");
            }
        }
        if (msg.value > spent) {
            (bool ok,) = msg.sender.call{value: msg.value - spent}("");
            if (!ok) revert RefundFailed();
        }
    }
}
