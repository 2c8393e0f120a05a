/** Contract test suites for Tiffin plugins: extend the suite of your SPI in a JUnit 5 test. */
package io.tiffin.plugins.testkit;
