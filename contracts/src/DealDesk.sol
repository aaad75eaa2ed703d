// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {Purse} from "./Purse.sol";

/// @notice Settles many direct deals in one transaction, each between its own seller and buyer:
/// the NFT goes from the seller to the buyer and the price from the buyer to the seller, with no
/// market in between taking a cut. A buyer paying in ETH is a Purse, since inside a transaction
/// only a contract can be made to pay; a buyer paying in an ERC-20 approves the desk beforehand,
/// as sellers approve it for their NFTs.
contract DealDesk {
    using SafeERC20 for IERC20;

    /// @param currency The ERC-20 paid, or the zero address for ETH.
    struct Deal {
        address nft;
        uint256 tokenId;
        address seller;
        address buyer;
        address currency;
        uint256 price;
    }

    function settle(Deal[] calldata deals) external {
        for (uint256 i = 0; i < deals.length; ++i) {
            Deal calldata deal = deals[i];
            IERC721(deal.nft).transferFrom(deal.seller, deal.buyer, deal.tokenId);
            if (deal.currency == address(0)) Purse(payable(deal.buyer)).pay(payable(deal.seller), deal.price);
            else IERC20(deal.currency).safeTransferFrom(deal.buyer, deal.seller, deal.price);
        }
    }
}
