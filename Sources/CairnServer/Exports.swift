/// Server code names the wire types (schemas, records, clocks) with CairnServer alone.
@_exported import CairnProtocol
