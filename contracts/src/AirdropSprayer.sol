// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {TestERC1155} from "./TestERC1155.sol";
import {TestERC721} from "./TestERC721.sol";

/// @notice Hands tokens of the open-mint test collections to many addresses in one transaction,
/// nobody paying: what spam airdrops look like on chain.
contract AirdropSprayer {
    function spray721(TestERC721 nft, uint256 firstId, address[] calldata to) external {
        for (uint256 i = 0; i < to.length; ++i) {
            nft.mint(to[i], firstId + i);
        }
    }

    function spray1155(TestERC1155 items, uint256 id, address[] calldata to) external {
        for (uint256 i = 0; i < to.length; ++i) {
            items.mint(to[i], id, 1, "");
        }
    }
}

/// @notice Sells units of an ERC-1155 edition for a fixed price, paid to the seller in the same
/// transaction as the unit moves: each buyer buys for itself. Sellers approve this contract first.
contract EditionShop {
    error WrongPayment();
    error PaymentFailed();

    function buy(TestERC1155 items, address seller, uint256 id, uint256 price) external payable {
        if (msg.value != price) revert WrongPayment();
        (bool ok,) = seller.call{value: msg.value}("");
        if (!ok) revert PaymentFailed();
        items.safeTransferFrom(seller, msg.sender, id, 1, "");
    }
}
