#!/usr/bin/env bash
# Builds the Java binding, its example and tests with plain javac, then runs the
# JUnit 4 tests. Needs Debian's libjna-java and junit4 (jars in /usr/share/java).
#   bindings/java/build.sh           build and test
#   bindings/java/build.sh --build   build only
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD_DIR=${DIST_BUILD_DIR:-$REPO/build}
OUT=$HERE/build
JARS=/usr/share/java
CLASSPATH="$OUT/classes:$JARS/jna.jar"
TEST_CLASSPATH="$CLASSPATH:$OUT/test-classes:$JARS/junit4.jar:$JARS/hamcrest-core.jar"

for jar in jna.jar junit4.jar hamcrest-core.jar; do
  [ -f "$JARS/$jar" ] || { echo "missing $JARS/$jar (apt-get install libjna-java junit4)" >&2; exit 1; }
done

rm -rf "$OUT"
mkdir -p "$OUT/classes" "$OUT/test-classes"
javac -Xlint:all -Werror -d "$OUT/classes" -cp "$JARS/jna.jar" \
  $(find "$HERE/src/main/java" "$HERE/examples" -name "*.java")
javac -Xlint:all -Werror -d "$OUT/test-classes" -cp "$TEST_CLASSPATH" $(find "$HERE/src/test/java" -name '*.java')
[ "${1:-}" = "--build" ] && exit 0

tests=$(cd "$HERE/src/test/java" && find . -name '*Test.java' | sed 's|^\./||; s|\.java$||; s|/|.|g' | sort)
DIST_BUILD_DIR=$BUILD_DIR java -cp "$TEST_CLASSPATH" -Djna.library.path="$BUILD_DIR/src" -Ddist.repo="$REPO" \
  org.junit.runner.JUnitCore $tests
