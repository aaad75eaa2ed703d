// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// @notice A collection minted for a fixed price paid to the contract itself: the minter pays
/// nobody who held the token before, so the trade is a paid mint, not a sale.
contract PaidMintERC721 is ERC721 {
    uint256 public immutable price;
    uint256 public nextTokenId = 1;

    /// @dev EIP-4906: the metadata of the tokens `_fromTokenId` to `_toTokenId` changed.
    event BatchMetadataUpdate(uint256 _fromTokenId, uint256 _toTokenId);

    error WrongPrice();

    string private _tokenBaseURI;

    constructor(string memory name_, string memory symbol_, uint256 price_) ERC721(name_, symbol_) {
        price = price_;
        _tokenBaseURI = string.concat("https://nft.example/", symbol_, "/");
    }

    /// @notice Anyone may move the collection's metadata; the move is announced as EIP-4906 says.
    function setBaseURI(string calldata baseURI_) external {
        _tokenBaseURI = baseURI_;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    function _baseURI() internal view override returns (string memory) {
        return _tokenBaseURI;
    }

    function mint() external payable returns (uint256 tokenId) {
        if (msg.value != price) revert WrongPrice();
        tokenId = nextTokenId++;
        _mint(msg.sender, tokenId);
    }
}
