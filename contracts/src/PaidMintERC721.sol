// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// @notice A collection minted for a fixed price paid to the contract itself: the minter pays
/// nobody who held the token before, so the trade is a paid mint, not a sale.
contract PaidMintERC721 is ERC721 {
    uint256 public immutable price;
    uint256 public nextTokenId = 1;

    error WrongPrice();

    constructor(string memory name_, string memory symbol_, uint256 price_) ERC721(name_, symbol_) {
        price = price_;
    }

    function mint() external payable returns (uint256 tokenId) {
        if (msg.value != price) revert WrongPrice();
        tokenId = nextTokenId++;
        _mint(msg.sender, tokenId);
    }
}
