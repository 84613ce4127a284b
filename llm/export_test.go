package llm

// RecordedReply is recorded, for the package's external tests.
var RecordedReply = recorded
