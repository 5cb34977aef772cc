// Package runtimeclass is the RuntimeClass admission plug-in: a pod naming
// a RuntimeClass gets the class's overhead and scheduling constraints, and
// a pod naming a class that does not exist is refused, as upstream's
// RuntimeClass plug-in does.
package runtimeclass
