package standalone

// TuneGC is tuneGC, for the tests.
var TuneGC = tuneGC
