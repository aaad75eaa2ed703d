// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Consecutive} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Consecutive.sol";

/// @notice ERC-721 whose initial supply is minted in ranges at construction, announced with
/// ERC-2309 `ConsecutiveTransfer` events instead of one `Transfer` per token.
contract TestERC721Consecutive is ERC721Consecutive {
    /// @dev EIP-4906: the metadata of the tokens `_fromTokenId` to `_toTokenId` changed.
    event BatchMetadataUpdate(uint256 _fromTokenId, uint256 _toTokenId);

    error LengthMismatch();

    string private _tokenBaseURI = "https://nft.example/consecutive/";

    /// @param receivers Owner of each range, in order; ranges start at token id 0 and follow on.
    /// @param amounts Size of each range; at most 5000 (OpenZeppelin's batch limit).
    constructor(string memory name_, string memory symbol_, address[] memory receivers, uint96[] memory amounts)
        ERC721(name_, symbol_)
    {
        if (receivers.length != amounts.length) revert LengthMismatch();
        for (uint256 i = 0; i < receivers.length; ++i) {
            _mintConsecutive(receivers[i], amounts[i]);
        }
    }

    /// @notice Ordinary single mint, only allowed after construction and outside the batch-minted range.
    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    function burn(uint256 tokenId) external {
        // Passing the caller as `auth` makes `_update` check that it owns or is approved for the token.
        _update(address(0), tokenId, _msgSender());
    }

    /// @notice Anyone may move the collection's metadata; the move is announced as EIP-4906 says.
    function setBaseURI(string calldata baseURI_) external {
        _tokenBaseURI = baseURI_;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    function _baseURI() internal view override returns (string memory) {
        return _tokenBaseURI;
    }
}
