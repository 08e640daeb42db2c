#include "ui/views/widgets/label_strip.h"

#include <QLabel>
#include <QResizeEvent>

namespace emberline::ui {

LabelStrip::LabelStrip(const QString &labelName, QWidget *parent) : QWidget(parent)
{
    m_label = new QLabel(this);
    m_label->setObjectName(labelName);
    m_label->setTextFormat(Qt::PlainText);
    setFixedHeight(m_label->sizeHint().height());
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void LabelStrip::setText(const QString &text)
{
    if (text == m_text)
        return;
    m_text = text;
    showText();
}

QSize LabelStrip::sizeHint() const
{
    return {200, height()};
}

QSize LabelStrip::minimumSizeHint() const
{
    return {20, height()};
}

void LabelStrip::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    m_label->setGeometry(0, 0, event->size().width(), event->size().height());
    showText();
}

void LabelStrip::showText()
{
    const QString shown = m_label->fontMetrics().elidedText(m_text, Qt::ElideRight, std::max(0, width()));
    m_label->setText(shown);
    m_label->setToolTip(shown == m_text ? QString() : m_text);
}

} // namespace emberline::ui
