package cli

// Tell is tell, for the tests.
var Tell = tell
