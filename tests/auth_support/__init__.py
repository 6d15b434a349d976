"""Authorization servers for the tests: a fake issuer in memory (``issuer``) and the npm
package oidc-provider run with node (``oidc``)."""
