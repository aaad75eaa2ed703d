// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice A pre-standard NFT in the style of CryptoKitties (2017): written against the ERC-721
/// draft, so its events index nothing (a Transfer log has one topic and 96 bytes of data) and its
/// ERC-165 answer names the draft's interface id (0x9a20483d), not the final one (0x80ac58cd).
contract LegacyERC721 {
    event Transfer(address from, address to, uint256 tokenId);
    event Approval(address owner, address approved, uint256 tokenId);

    bytes4 private constant INTERFACE_ERC165 = 0x01ffc9a7;
    bytes4 private constant INTERFACE_ERC721_DRAFT = 0x9a20483d;

    string public name;
    string public symbol;
    uint256 public totalSupply;

    mapping(uint256 => address) private _owners;
    mapping(address => uint256) private _balances;
    mapping(uint256 => address) public tokenIndexToApproved;

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == INTERFACE_ERC165 || interfaceId == INTERFACE_ERC721_DRAFT;
    }

    function balanceOf(address owner) external view returns (uint256) {
        return _balances[owner];
    }

    function ownerOf(uint256 tokenId) external view returns (address owner) {
        owner = _owners[tokenId];
        require(owner != address(0));
    }

    /// @notice Ids are assigned in order from 1, as CryptoKitties reserved id 0.
    function mint(address to) external returns (uint256 tokenId) {
        require(to != address(0));
        tokenId = ++totalSupply;
        _transfer(address(0), to, tokenId);
    }

    /// @dev As in CryptoKitties, the zero address and the contract itself are refused, so the
    /// only way to get rid of a token is to send it to some other unowned address.
    function transfer(address to, uint256 tokenId) external {
        require(to != address(0));
        require(to != address(this));
        require(_owners[tokenId] == msg.sender);
        _transfer(msg.sender, to, tokenId);
    }

    function approve(address to, uint256 tokenId) external {
        require(_owners[tokenId] == msg.sender);
        tokenIndexToApproved[tokenId] = to;
        emit Approval(msg.sender, to, tokenId);
    }

    /// @dev Draft semantics: only the approved address may pull a token, not its owner.
    function transferFrom(address from, address to, uint256 tokenId) external {
        require(to != address(0));
        require(to != address(this));
        require(tokenIndexToApproved[tokenId] == msg.sender);
        require(_owners[tokenId] == from);
        _transfer(from, to, tokenId);
    }

    function _transfer(address from, address to, uint256 tokenId) private {
        _balances[to]++;
        _owners[tokenId] = to;
        if (from != address(0)) {
            _balances[from]--;
            delete tokenIndexToApproved[tokenId];
        }
        emit Transfer(from, to, tokenId);
    }
}
