/// Why the demo could not run: a missing prerequisite or a part of the stack that would not start. The message
/// says what to do.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
