// Package rowcopy is what package transfer needs of the drivers to copy one
// store into another: the rows of one as they are stored (Source), and a
// transaction of the other that takes them as they are (Tx). Each driver
// sets its hook in its init, so that transfer reaches them without the
// drivers exporting methods for it.
package rowcopy
