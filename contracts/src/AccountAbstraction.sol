// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import {EntryPoint} from "@account-abstraction/contracts/core/EntryPoint.sol";
import {IEntryPoint} from "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import {SimpleAccountFactory} from "@account-abstraction/contracts/samples/SimpleAccountFactory.sol";

/// @notice ERC-4337's EntryPoint v0.7 and the factory of its SimpleAccount, as the npm package of
/// the reference implementation (account-abstraction/contracts 0.7.0) ships them, under names that
/// say the version. The factory deploys each account as a proxy to the SimpleAccount it creates.
contract EntryPointV07 is EntryPoint {}

contract SimpleAccountFactoryV07 is SimpleAccountFactory {
    constructor(IEntryPoint entryPoint_) SimpleAccountFactory(entryPoint_) {}
}
