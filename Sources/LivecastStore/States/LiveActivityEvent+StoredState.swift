package import LivecastCore
import PostgresNIO

/// An update's event (`updates.event`): `start`, `update` or `end`, decoded and bound as itself like the states.
extension LiveActivityEvent: StoredState {}
