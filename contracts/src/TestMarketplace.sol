// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";

/// @notice Minimal fixed-price ERC-721 market. A sale moves the payment (ETH, or an ERC-20 pulled
/// from the buyer) and the token in the same transaction, which is what lets an indexer pair a
/// transfer with its price. Sellers approve this contract for their collection beforehand.
contract TestMarketplace {
    using SafeERC20 for IERC20;

    struct Listing {
        address seller;
        address currency;
        uint256 price;
    }

    mapping(address nft => mapping(uint256 tokenId => Listing)) public listings;

    event Listed(address indexed nft, uint256 indexed tokenId, address indexed seller, address currency, uint256 price);
    event Sale(
        address indexed nft,
        uint256 indexed tokenId,
        address indexed buyer,
        address seller,
        address currency,
        uint256 price
    );

    error NotTokenOwner();
    error NotListed();
    error WrongPayment();
    error PaymentFailed();

    /// @param currency The ERC-20 to be paid in, or the zero address for ETH.
    function list(address nft, uint256 tokenId, address currency, uint256 price) external {
        if (IERC721(nft).ownerOf(tokenId) != msg.sender) revert NotTokenOwner();
        listings[nft][tokenId] = Listing(msg.sender, currency, price);
        emit Listed(nft, tokenId, msg.sender, currency, price);
    }

    function buy(address nft, uint256 tokenId) external payable {
        Listing memory listing = listings[nft][tokenId];
        if (listing.seller == address(0)) revert NotListed();
        delete listings[nft][tokenId];
        if (listing.currency == address(0)) {
            if (msg.value != listing.price) revert WrongPayment();
            (bool ok,) = listing.seller.call{value: msg.value}("");
            if (!ok) revert PaymentFailed();
        } else {
            if (msg.value != 0) revert WrongPayment();
            IERC20(listing.currency).safeTransferFrom(msg.sender, listing.seller, listing.price);
        }
        // Reverts if the seller no longer owns the token or withdrew the approval: stale listings cannot fill.
        IERC721(nft).transferFrom(listing.seller, msg.sender, tokenId);
        emit Sale(nft, tokenId, msg.sender, listing.seller, listing.currency, listing.price);
    }
}
