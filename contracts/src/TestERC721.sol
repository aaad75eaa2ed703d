// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Burnable} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Burnable.sol";

/// @notice Open-mint ERC-721 for development chains: anyone may mint, so fixtures need no roles.
contract TestERC721 is ERC721Burnable {
    string private _tokenBaseURI;

    constructor(string memory name_, string memory symbol_) ERC721(name_, symbol_) {
        _tokenBaseURI = string.concat("https://nft.example/", symbol_, "/");
    }

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    /// @notice Mints `count` consecutive ids starting at `firstId`, one Transfer event each.
    /// @dev Deliberately per-token `_mint` rather than ERC-2309, so the events are the ordinary
    /// ERC-721 ones and many of them fit in one transaction.
    function mintBatch(address to, uint256 firstId, uint256 count) external {
        for (uint256 i = 0; i < count; ++i) {
            _mint(to, firstId + i);
        }
    }

    function setBaseURI(string calldata baseURI_) external {
        _tokenBaseURI = baseURI_;
    }

    function _baseURI() internal view override returns (string memory) {
        return _tokenBaseURI;
    }
}
