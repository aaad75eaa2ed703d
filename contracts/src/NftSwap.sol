// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";

/// @notice NFT-for-NFT trades: the maker offers one token for another, the taker accepts and both
/// move in one transaction with no money at all, so neither is a sale.
contract NftSwap {
    struct Offer {
        address maker;
        address giveNft;
        uint256 giveId;
        address wantNft;
        uint256 wantId;
        bool active;
    }

    Offer[] public offers;

    error NotActive();

    function offer(address giveNft, uint256 giveId, address wantNft, uint256 wantId) external returns (uint256 id) {
        id = offers.length;
        offers.push(Offer(msg.sender, giveNft, giveId, wantNft, wantId, true));
    }

    function accept(uint256 id) external {
        Offer storage o = offers[id];
        if (!o.active) revert NotActive();
        o.active = false;
        IERC721(o.giveNft).transferFrom(o.maker, msg.sender, o.giveId);
        IERC721(o.wantNft).transferFrom(msg.sender, o.maker, o.wantId);
    }
}
